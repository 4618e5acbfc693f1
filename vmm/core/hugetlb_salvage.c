// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include "core/hugetlb_salvage.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "clock.h"
#include "core/guest_ram.h"
#include "log.h"
#include "core/report.h"

#ifndef MADV_HWPOISON
#define MADV_HWPOISON 100
#endif

static ssize_t read_page(int fd, void *buf, size_t len, off_t off)
{
	return pread(fd, buf, len, off);
}

/*
 * The kernel's poison marker on a page: CAP_SYS_ADMIN, CONFIG_MEMORY_FAILURE.
 * Right before 6.11 only; the VMM runs the SIGBUS layer's, which also
 * expects the AR a newer kernel answers with.
 */
static int poison_page(void *page, uint64_t gpa)
{
	(void)gpa;
	return madvise(page, 4096, MADV_HWPOISON);
}

static struct salvage_ops ops = { read_page, poison_page };
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct salvage_result done[SALVAGE_MAX];
static unsigned int ndone;

void hugetlb_salvage_set_ops(const struct salvage_ops *o)
{
	ops = *o;
}

void hugetlb_salvage_set_poison(int (*poison)(void *page, uint64_t gpa))
{
	ops.poison_page = poison;
}

int hugetlb_salvage_possible(const struct memslot *s)
{
	return s && s->backing == BACKING_HUGETLB_SHARED && s->fd >= 0;
}

int hugetlb_salvage_page_bad(const struct salvage_result *r, uint64_t gpa)
{
	uint64_t i = (gpa - r->gpa) / 4096;

	if (gpa < r->gpa || i >= SALVAGE_PAGES)
		return 0;
	return (r->bad_mask[i / 64] >> (i % 64)) & 1;
}

uint64_t hugetlb_salvage_marker_gpa(uintptr_t hva)
{
	uint64_t gpa = 0;
	unsigned int i;

	/*
	 * Newest first: the kernel hands a later scratch mapping the address
	 * an earlier one was moved away from, and a marker's AO follows its
	 * own salvage at once.
	 */
	pthread_mutex_lock(&lock);
	for (i = ndone; i-- > 0 && !gpa;)
		if (done[i].scratch && hva - done[i].scratch < SALVAGE_UNIT)
			gpa = done[i].gpa + ((hva - done[i].scratch) & ~4095ULL);
	pthread_mutex_unlock(&lock);
	return gpa;
}

unsigned int hugetlb_salvage_take(uint64_t *gpas, unsigned int max)
{
	unsigned int i, n = 0;

	pthread_mutex_lock(&lock);
	for (i = 0; i < ndone; i++)
		if (done[i].status == SALVAGE_DONE && n < max)
			gpas[n++] = done[i].gpa;
	ndone = 0;
	pthread_mutex_unlock(&lock);
	return n;
}

void hugetlb_salvage_forget(void)
{
	hugetlb_salvage_take(NULL, 0);
}

/*
 * Build the replacement of the huge page at hva (file offset off) in a
 * scratch mapping and move it in. r->status and r->why say how it went.
 */
static void salvage_one(const struct memslot *s, uint8_t *hva, off_t off,
			struct salvage_result *r)
{
	uint8_t *scratch = guest_ram_map_anon(SALVAGE_UNIT);
	int read_errno = 0;
	unsigned int i;

	r->status = SALVAGE_FAILED;
	if (scratch == MAP_FAILED) {
		snprintf(r->why, sizeof(r->why), "no scratch mapping: %s", strerror(errno));
		return;
	}
	/*
	 * 4 KiB pages, never merged: a poison marker must not take a THP's
	 * neighbours with it, and KSM (a VMM started with PR_SET_MEMORY_MERGE
	 * inherits it) must not swap the zeroed page for a shared one between
	 * the store and MADV_HWPOISON.
	 */
	if (madvise(scratch, SALVAGE_UNIT, MADV_NOHUGEPAGE) && errno != EINVAL)
		pr_warn("salvage: madvise(MADV_NOHUGEPAGE): %s", strerror(errno));
	if (madvise(scratch, SALVAGE_UNIT, MADV_UNMERGEABLE) && errno != EINVAL)
		pr_warn("salvage: madvise(MADV_UNMERGEABLE): %s", strerror(errno));
	r->scratch = (uintptr_t)scratch;
	/*
	 * read() returns the bytes up to the next raw poisoned subpage and
	 * fails (EIO) only on one: read as far as it goes, step over the
	 * subpage it stopped at. A few calls, not 512 (each subpage a read
	 * looks at takes mf_mutex in the kernel).
	 */
	for (i = 0; i < SALVAGE_PAGES;) {
		ssize_t n = ops.read_page(s->fd, scratch + i * 4096, (SALVAGE_PAGES - i) * 4096,
					  off + i * 4096);

		if (n >= 4096) {
			i += n / 4096;	/* a partial page at the end is read again */
			continue;
		}
		/* anything short of a whole page is data we do not have */
		r->bad_mask[i / 64] |= 1ULL << (i % 64);
		r->bad++;
		if (!read_errno)
			read_errno = n < 0 ? errno : EIO;
		i++;
	}
	if (r->bad == SALVAGE_PAGES) {
		r->status = SALVAGE_UNAVAILABLE;
		snprintf(r->why, sizeof(r->why), "read() of the poisoned huge page failed for all "
			 "%llu subpages (%s): the kernel lacks 38c1ddbde6c6 (hugetlbfs: improve read "
			 "HWPOISON hugepage, v6.6)", SALVAGE_PAGES, strerror(read_errno));
		munmap(scratch, SALVAGE_UNIT);
		r->scratch = 0;
		return;
	}
	for (i = 0; i < SALVAGE_PAGES; i++) {
		uint8_t *page = scratch + i * 4096;

		if (!hugetlb_salvage_page_bad(r, r->gpa + i * 4096ULL))
			continue;
		/*
		 * A store first: a page only read is the shared zero page, and
		 * poisoning that would hit every process on the machine.
		 */
		memset(page, 0, 4096);
		if (ops.poison_page(page, r->gpa + i * 4096ULL)) {
			snprintf(r->why, sizeof(r->why), "madvise(MADV_HWPOISON) on the subpage at "
				 "GPA %#llx: %s", (unsigned long long)(r->gpa + i * 4096ULL),
				 strerror(errno));
			munmap(scratch, SALVAGE_UNIT);
			r->scratch = 0;
			return;
		}
	}
	/* one step: a vCPU sees the lost huge page or the whole replacement */
	if (mremap(scratch, SALVAGE_UNIT, SALVAGE_UNIT, MREMAP_MAYMOVE | MREMAP_FIXED, hva) !=
	    (void *)hva) {
		int e = errno;

		/*
		 * mremap() unmaps the target before it can fail (ENOMEM): put
		 * the file's (lost) page back, or guest RAM has a hole there
		 */
		if (guest_ram_map_file(s, hva, SALVAGE_UNIT) == MAP_FAILED)
			snprintf(r->why, sizeof(r->why), "mremap over the lost huge page: %s; and "
				 "mapping the file back: %s", strerror(e), strerror(errno));
		else
			snprintf(r->why, sizeof(r->why), "mremap over the lost huge page: %s",
				 strerror(e));
		munmap(scratch, SALVAGE_UNIT);
		r->scratch = 0;
		return;
	}
	r->status = SALVAGE_DONE;
}

static const char *status_name(enum salvage_status st)
{
	return st == SALVAGE_DONE ? "done" : st == SALVAGE_UNAVAILABLE ? "unavailable" : "failed";
}

/* The "hugetlb_salvage" report line: the huge page, what was kept, what is lost. */
static void report_salvage(const struct salvage_result *r)
{
	char bad[256];
	size_t n = 0;
	unsigned int i, listed = 0;

	bad[0] = 0;
	for (i = 0; i < SALVAGE_PAGES && r->status == SALVAGE_DONE; i++) {
		uint64_t g = r->gpa + i * 4096ULL;

		if (!hugetlb_salvage_page_bad(r, g))
			continue;
		if (listed++ == 8 || n + 24 >= sizeof(bad))
			break;
		n += snprintf(bad + n, sizeof(bad) - n, "%s\"%#llx\"", n ? "," : "",
			      (unsigned long long)g);
	}
	report("hugetlb_salvage", "\"gpa\":\"%#llx\",\"bytes\":%llu,\"status\":\"%s\","
	       "\"pages_kept\":%llu,\"pages_poisoned\":%u,\"poisoned\":[%s],\"ms\":%.3f%s%s%s",
	       (unsigned long long)r->gpa, SALVAGE_UNIT, status_name(r->status),
	       r->status == SALVAGE_DONE ? SALVAGE_PAGES - r->bad : 0ULL,
	       r->status == SALVAGE_DONE ? r->bad : (unsigned int)SALVAGE_PAGES, bad,
	       r->ns / 1e6, r->why[0] ? ",\"reason\":\"" : "", r->why, r->why[0] ? "\"" : "");
}

int hugetlb_salvage(const struct memslot *s, uint64_t gpa, struct salvage_result *out)
{
	uint64_t t0 = monotonic_ns();
	struct salvage_result r = { .gpa = gpa & ~(SALVAGE_UNIT - 1) };
	unsigned int i;

	pthread_mutex_lock(&lock);
	for (i = 0; i < ndone; i++) {
		if (done[i].gpa == r.gpa) {
			*out = done[i];
			pthread_mutex_unlock(&lock);
			return out->status == SALVAGE_DONE ? 0 : -1;
		}
	}
	if (!hugetlb_salvage_possible(s)) {
		r.status = SALVAGE_UNAVAILABLE;
		snprintf(r.why, sizeof(r.why), "guest RAM at GPA %#llx is not a shared hugetlb "
			 "memfd (--backing hugetlb-shared)", (unsigned long long)r.gpa);
	} else if (r.gpa < s->gpa || r.gpa + SALVAGE_UNIT > s->gpa + s->size) {
		r.status = SALVAGE_UNAVAILABLE;
		snprintf(r.why, sizeof(r.why), "GPA %#llx is not a whole huge page of slot %u",
			 (unsigned long long)r.gpa, s->id);
	} else if (ndone == SALVAGE_MAX) {
		r.status = SALVAGE_UNAVAILABLE;
		snprintf(r.why, sizeof(r.why), "%u huge pages were salvaged already: no more are "
			 "kept track of", SALVAGE_MAX);
	} else {
		salvage_one(s, s->hva + (r.gpa - s->gpa), (off_t)(r.gpa - s->gpa), &r);
	}
	r.ns = monotonic_ns() - t0;
	if (ndone < SALVAGE_MAX)
		done[ndone++] = r;
	*out = r;
	pthread_mutex_unlock(&lock);
	report_salvage(&r);
	return r.status == SALVAGE_DONE ? 0 : -1;
}
