// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include "migrate/poison_keep.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/vm.h"
#include "hwlab_abi.h"
#include "log.h"
#include "uffd_poison_uapi.h"

/* The VM's userfaultfd: open for the process's life, as the markers' registration. */
static int uffd = -1;

/* 0, or -1 with why filled: this kernel cannot place markers. */
static int uffd_open(char *why, size_t n)
{
	struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_POISON };

	if (uffd >= 0)
		return 0;
	uffd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0) {
		snprintf(why, n, "userfaultfd: %s", strerror(errno));
		return -1;
	}
	if (ioctl(uffd, UFFDIO_API, &api) || !(api.features & UFFD_FEATURE_POISON)) {
		snprintf(why, n, "the kernel lacks UFFDIO_POISON (Linux 6.6, or our series' "
			 "backport): UFFDIO_API %s", errno == EINVAL ? "refused the feature" :
			 "did not offer it");
		close(uffd);
		uffd = -1;
		return -1;
	}
	return 0;
}

/* The unit [gpa, gpa + len) of slot s, emptied: nothing is populated there. */
static int drop_contents(const struct memslot *s, uint64_t gpa, uint64_t len)
{
	uint8_t *hva = s->hva + (gpa - s->gpa);

	if (memslot_backing_is_shared_file(s->backing))
		return fallocate(s->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				 gpa - s->gpa, len);
	return madvise(hva, len, MADV_DONTNEED);
}

/*
 * Register the unit, then empty and mark it. The check that this memory
 * takes UFFDIO_POISON comes before anything is emptied; a failure after
 * the registration unregisters (nothing reads this userfaultfd: a missing
 * page left registered would hang the next touch of it).
 */
static int mark_unit(const struct memslot *s, uint64_t gpa, uint64_t len, char *why, size_t n)
{
	struct uffdio_register reg = {
		.range = { .start = (uintptr_t)(s->hva + (gpa - s->gpa)), .len = len },
		.mode = UFFDIO_REGISTER_MODE_MISSING,
	};
	struct uffdio_poison poison = { .range = reg.range };
	struct uffdio_range range = reg.range;

	if (ioctl(uffd, UFFDIO_REGISTER, &reg)) {
		snprintf(why, n, "UFFDIO_REGISTER of GPA %#llx (%s): %s", (unsigned long long)gpa,
			 memslot_backing_name(s->backing), strerror(errno));
		return -1;
	}
	if (!(reg.ioctls & (1ULL << _UFFDIO_POISON))) {
		snprintf(why, n, "UFFDIO_POISON is not offered for %s memory",
			 memslot_backing_name(s->backing));
		goto unregister;
	}
	if (drop_contents(s, gpa, len)) {
		snprintf(why, n, "emptying GPA %#llx: %s", (unsigned long long)gpa, strerror(errno));
		goto unregister;
	}
	errno = 0;
	if (ioctl(uffd, UFFDIO_POISON, &poison) || poison.updated != (int64_t)len) {
		snprintf(why, n, "UFFDIO_POISON of GPA %#llx: %s", (unsigned long long)gpa,
			 errno ? strerror(errno) : "not all of it");
		goto unregister;
	}
	return 0;
unregister:
	ioctl(uffd, UFFDIO_UNREGISTER, &range);
	return -1;
}

int poison_keep(struct vm *vm, const struct poison_list *pages, struct poison_keep_result *out)
{
	unsigned int i = 0, j;

	*out = (struct poison_keep_result) { .how = pages->count ? "uffd_poison" : "none" };
	if (pages->count && uffd_open(out->why, sizeof(out->why)))
		out->how = "list_only";
	while (i < pages->count) {
		uint64_t gpa = pages->gpas[i];
		const struct memslot *s = memslot_find_gpa(&vm->mem, gpa);
		uint64_t unit, start;
		unsigned int first = i, in_unit = 0;

		if (!s) {
			pr_err("a poisoned page at GPA %#llx is outside this VM's RAM",
			       (unsigned long long)gpa);
			return -1;
		}
		unit = memslot_backing_page_size(s->backing);
		start = gpa - ((gpa - s->gpa) % unit);
		for (j = i; j < pages->count && pages->gpas[j] < start + unit; j++)
			in_unit++;
		i = j;
		if (in_unit < unit / GUEST_PAGE_SIZE) {
			/* a hugetlb page with good subpages: a marker would lose them */
			out->partial_huge++;
		} else if (!strcmp(out->how, "uffd_poison")) {
			if (!mark_unit(s, start, unit, out->why, sizeof(out->why))) {
				out->units++;
				out->pages += in_unit;
				continue;
			}
			out->how = "list_only";
		}
		/* no marker: zero it (the source's bytes never came), the caller tells the guest */
		for (j = first; j < i; j++) {
			memset(s->hva + (pages->gpas[j] - s->gpa), 0, GUEST_PAGE_SIZE);
			if (poison_list_add(&out->unmarked, pages->gpas[j], GUEST_PAGE_SIZE) < 0)
				return -1;
		}
	}
	return 0;
}
