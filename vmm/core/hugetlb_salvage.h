/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A lost huge page, salvaged: lose 4 KiB, not 2 MiB.
 *
 * When one 4 KiB of a 2 MiB hugetlb page goes bad, the kernel unmaps the
 * whole huge page from the VMM (it cannot split a hugetlb mapping), and the
 * guest loses 2 MiB of RAM for one bad cache line. A guest whose own THP
 * spans that range cannot live with it: since 6.12, the THP split in its
 * memory_failure() reads every subpage (try_to_map_unused_to_zeropage()),
 * and the first of the 511 the guest has not yet been told of is a machine
 * check in kernel context.
 *
 * For guest RAM that is a hugetlbfs memfd mapped shared (--backing
 * hugetlb-shared), the file still holds the data, and since Linux 6.6
 * (38c1ddbde6c6, "hugetlbfs: improve read HWPOISON hugepage", in our 6.1
 * series as 10/10) read() returns every subpage but the raw poisoned ones,
 * which fail with EIO. A salvage reads the 512 subpages into a scratch
 * mapping of 4 KiB anonymous pages, makes each subpage read() refused a
 * poisoned page again (write-touched, then MADV_HWPOISON: the kernel's own
 * poison marker, so a later access is the AR the guest would have got;
 * UFFDIO_POISON would be the marker that costs no page, from 6.6), and
 * moves the whole scratch over the lost huge page with one mremap(), so no
 * vCPU ever sees a half-built page. The guest is then told of the bad
 * 4 KiB pages only. William Roche's QEMU RFC of September 2024
 * (system/hugetlbfs_ras.c, not merged) does the same from the same kernel
 * change; QEMU 11.1, measured here, tells the guest one page per SIGBUS.
 *
 * Without the kernel change every read() of the poisoned huge page fails:
 * the salvage says so and the whole extent is told, as before.
 */
#ifndef HWLAB_HUGETLB_SALVAGE_H
#define HWLAB_HUGETLB_SALVAGE_H

#include <stdint.h>
#include <sys/types.h>

#include "core/memslot.h"

#define SALVAGE_UNIT		(2ULL << 20)
#define SALVAGE_PAGES		(SALVAGE_UNIT / 4096)
/* lost huge pages remembered; one more is not salvaged (said so) */
#define SALVAGE_MAX		128

enum salvage_status {
	SALVAGE_DONE,		/* replaced: only the pages in bad[] are lost */
	SALVAGE_UNAVAILABLE,	/* nothing to do it with: the whole extent is lost */
	SALVAGE_FAILED,		/* tried and failed: the whole extent is lost */
};

struct salvage_result {
	uint64_t gpa;		/* first byte of the huge page */
	enum salvage_status status;
	unsigned int bad;	/* subpages read() refused */
	uint64_t bad_mask[SALVAGE_PAGES / 64];	/* bit i: subpage i */
	uintptr_t scratch;	/* where the scratch was built (its poison markers' AO name it) */
	uint64_t ns;		/* how long the salvage took */
	char why[192];		/* UNAVAILABLE and FAILED: the reason */
};

/*
 * How the salvage reads a subpage and marks one poisoned. The VMM's are
 * pread(2) and madvise(MADV_HWPOISON); the host unit tests replace them
 * (nothing may poison the machine the tests run on).
 */
struct salvage_ops {
	/* pread(2): as the kernel's hugetlbfs read, up to the next bad subpage */
	ssize_t (*read_page)(int fd, void *buf, size_t len, off_t off);
	/* madvise(MADV_HWPOISON) of page, which will be guest RAM at gpa */
	int (*poison_page)(void *page, uint64_t gpa);
};
void hugetlb_salvage_set_ops(const struct salvage_ops *ops);
/*
 * Only the marker: since Linux 6.11 MADV_HWPOISON answers its caller with
 * an AR, which the SIGBUS layer (mce/sigbus.c) must be told to expect, so
 * it installs its own poison_page; this core file cannot call up to it.
 */
void hugetlb_salvage_set_poison(int (*poison_page)(void *page, uint64_t gpa));

/* Whether s's huge pages can be salvaged at all (a shared hugetlb memfd). */
int hugetlb_salvage_possible(const struct memslot *s);

/*
 * Salvage the huge page of slot s that holds gpa, once: later calls (from
 * other vCPUs that touched it meanwhile, or the AO for it) wait for the
 * first and get its result. Reports one "hugetlb_salvage" line the first
 * time. Returns 0 with *out when the status is SALVAGE_DONE, else -1 (*out
 * says why). Thread-safe; not async-signal-safe.
 */
int hugetlb_salvage(const struct memslot *s, uint64_t gpa, struct salvage_result *out);

/* Whether the 4 KiB page at gpa is one of r's bad subpages. */
int hugetlb_salvage_page_bad(const struct salvage_result *r, uint64_t gpa);

/*
 * The GPA whose poison marker a salvage built at hva (its scratch page
 * before the move): the AO the marker's MADV_HWPOISON sends to an
 * early-kill VMM names that address. 0 if none.
 */
uint64_t hugetlb_salvage_marker_gpa(uintptr_t hva);

/*
 * Forget every salvage and give back (up to max) the GPAs of the huge pages
 * replaced, for a reset to map the file's fresh pages there again: the
 * scratch pages and their poison markers must not outlive the guest that
 * was told of them. Returns how many.
 */
unsigned int hugetlb_salvage_take(uint64_t *gpas, unsigned int max);
/* hugetlb_salvage_take() without the list. */
void hugetlb_salvage_forget(void);

#endif
