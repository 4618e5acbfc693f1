/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The outer kernel's ways in to memory_failure() for a page of a process:
 * /proc/PID/pagemap for the PFN behind a virtual address, and the debugfs
 * injectors hwpoison/corrupt-pfn (HWPOISON_INJECT) and hwpoison/corrupt-va
 * (kernel patch 0002). Shared by the VMM's test hook and hwpoison-guest.
 * Never point these at the machine you work on: only inside the outer VM.
 */
#ifndef HWLAB_HWPOISON_INJECT_H
#define HWLAB_HWPOISON_INJECT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define HWLAB_DEBUGFS	"/sys/kernel/debug"

enum pagemap_state {
	PAGEMAP_ERROR = -1,	/* pagemap could not be read: err says why */
	PAGEMAP_PRESENT,	/* *pfn is the page frame */
	PAGEMAP_NOT_PRESENT,	/* never touched (or unmapped) */
	PAGEMAP_SWAPPED,
	PAGEMAP_PFN_HIDDEN,	/* present, but the PFN reads 0: needs CAP_SYS_ADMIN */
};

/* The page frame behind hva in process pid (0: this process). */
enum pagemap_state pagemap_lookup(pid_t pid, uint64_t hva, uint64_t *pfn, char *err,
				  size_t errlen);

/*
 * Write pfn to DEBUGFS/hwpoison/corrupt-pfn, or "pid hva" to .../corrupt-va.
 * debugfs NULL means HWLAB_DEBUGFS. Return 0, or -1 with a message in err
 * (errno from the failed call preserved).
 */
int hwpoison_corrupt_pfn(const char *debugfs, uint64_t pfn, char *err, size_t errlen);
int hwpoison_corrupt_va(const char *debugfs, pid_t pid, uint64_t hva, char *err, size_t errlen);

#endif
