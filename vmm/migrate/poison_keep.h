/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The destination keeps the source's poison (issue #21, part 4): each page
 * that came poisoned gets a poison marker (userfaultfd's UFFDIO_POISON,
 * Linux 6.6, backported in kernel/6.1/patches), so that a guest that touches it
 * faults as on the source: KVM finds a hwpoisoned page and the vCPU gets
 * SIGBUS BUS_MCEERR_AR, which becomes the guest's machine check. The marker
 * takes no physical page. A hugetlb page goes whole, as it was lost whole.
 *
 * Where the kernel lacks UFFDIO_POISON (or userfaultfd), or a hugetlb page
 * lost only some subpages, the page is zeroed and only the VMM's list keeps
 * it: said in the restore's report ("poison_kept":"list_only" and why), and
 * the guest, unless it was told at the source, is told at once (an AO): it
 * must not find zeros where its data was without a machine check.
 */
#ifndef HWLAB_MIGRATE_POISON_KEEP_H
#define HWLAB_MIGRATE_POISON_KEEP_H

#include "core/poison_list.h"

struct vm;

struct poison_keep_result {
	const char *how;		/* "uffd_poison", "list_only", or "none" (no pages) */
	char why[160];			/* list_only: why not a marker */
	unsigned int units;		/* extents marked (a hugetlb page is one) */
	unsigned int pages;		/* 4 KiB pages they hold */
	unsigned int partial_huge;	/* hugetlb pages with only some subpages poisoned */
	/* pages left without a marker, zeroed: the caller frees (poison_list_free()) */
	struct poison_list unmarked;
};

/*
 * Mark every page of pages (sorted); those left unmarked into out->unmarked.
 * 0 (also for the fallback), or -1 after a message.
 */
int poison_keep(struct vm *vm, const struct poison_list *pages, struct poison_keep_result *out);

#endif
