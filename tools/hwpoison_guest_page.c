// SPDX-License-Identifier: GPL-2.0
/*
 * hwpoison-guest's second proof: the guest page a GPA names, through the
 * proven table to its HVA and from pagemap to its PFN, is the VMM's alone,
 * and is still the same page right before the write. The tool never faults
 * a page in itself.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "hwpoison_guest.h"
#include "hwpoison_inject.h"
#include "log.h"
#include "memmap.h"

/* The HVA behind gpa in the table's slots; a GPA outside guest RAM is refused. */
uint64_t guest_page_hva(const struct memmap *m, uint64_t gpa, pid_t pid)
{
	const struct memmap_slot *s = memmap_find_gpa(m, gpa), *last = &m->slots[m->count - 1];

	if (!s)
		die("GPA %#" PRIx64 " is not in the guest RAM of pid %d (RAM ends at %#" PRIx64 ")",
		    gpa, pid, last->gpa + last->size);
	return s->hva + (gpa - s->gpa);
}

/* The shared memfd gpa's slot is in, if any (page_classify_ram()). */
enum shared_ram guest_page_shared_ram(const struct memmap *m, uint64_t gpa)
{
	const struct memmap_slot *s = memmap_find_gpa(m, gpa);

	if (s && !strcmp(s->backing, "hugetlb-shared"))
		return SHARED_RAM_HUGETLB;
	if (s && !strcmp(s->backing, "shmem"))
		return SHARED_RAM_SHMEM;
	return SHARED_RAM_NONE;
}

/*
 * A page of a shared file is the VMM's alone only if no other process
 * holds the file: one that has it open, or mapped without having touched
 * this page yet, would take the poison later (pagemap's exclusive bit
 * counts only the mappings faulted in now).
 */
void guest_page_check_file_unshared(pid_t pid, uint64_t hva, uint64_t gpa)
{
	char err[256];
	pid_t holder = 0;
	int r = memmap_file_held_elsewhere(pid, hva, &holder, err, sizeof(err));

	if (r < 0)
		die("GPA %#" PRIx64 ": %s", gpa, err);
	if (r)
		die("GPA %#" PRIx64 " (hva %#" PRIx64 ") is in guest RAM that pid %d shares with "
		    "pid %d, which holds the same file: refusing to poison it", gpa, hva, pid,
		    (int)holder);
}

/*
 * The PFN behind hva, if the page is the VMM's alone (lib: page_inspect).
 * With wait_s, a page the guest has not touched yet is polled for until
 * it has: the tool never faults a page in itself, since a read fault maps
 * the shared zero page and a write through /proc/PID/mem could undo a
 * store the guest makes at the same time.
 */
uint64_t guest_page_pfn(pid_t pid, uint64_t hva, uint64_t gpa, enum shared_ram shared,
			unsigned int wait_s)
{
	uint64_t deadline = monotonic_ns() + wait_s * 1000000000ULL, pfn;
	enum page_verdict v;
	char err[256];

	while ((v = page_inspect_ram(pid, hva, shared, &pfn, err, sizeof(err))) ==
	       PAGE_NOT_PRESENT &&
	       monotonic_ns() < deadline)
		usleep(10 * 1000);
	if (v == PAGE_ERROR)
		die("%s", err);
	if (v == PAGE_NOT_PRESENT && wait_s)
		die("GPA %#" PRIx64 " (hva %#" PRIx64 ") is still not present after %u s: the "
		    "guest never touched it", gpa, hva, wait_s);
	if (v == PAGE_NOT_PRESENT)
		die("GPA %#" PRIx64 " (hva %#" PRIx64 ") is not present: the guest never touched "
		    "it (--wait-present SECONDS waits for it to)", gpa, hva);
	if (v != PAGE_OK)
		die("GPA %#" PRIx64 " (hva %#" PRIx64 ", pfn %#" PRIx64 ") of pid %d is %s: "
		    "refusing to poison it", gpa, hva, pfn, pid, page_verdict_why(v));
	return pfn;
}

/*
 * Between the lookup and the write the page can change hands (the guest
 * reset and the VMM remapped it, the kernel migrated or merged it): look
 * again right before writing, and refuse if it is not the same page, still
 * the VMM's alone.
 */
void guest_page_recheck_pfn(pid_t pid, uint64_t hva, uint64_t gpa, enum shared_ram shared,
			    uint64_t pfn)
{
	uint64_t now;
	char err[256];
	enum page_verdict v = page_inspect_ram(pid, hva, shared, &now, err, sizeof(err));

	if (v == PAGE_ERROR)
		die("%s", err);
	if (v != PAGE_OK || now != pfn)
		die("GPA %#" PRIx64 " (hva %#" PRIx64 ") changed under us: pfn %#" PRIx64
		    " became %#" PRIx64 " (%s): refusing to poison it", gpa, hva, pfn, now,
		    page_verdict_why(v));
}
