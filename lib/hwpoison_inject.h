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

/* /proc/PID/pagemap, Documentation/admin-guide/mm/pagemap.rst */
#define PAGEMAP_PRESENT_BIT	(1ULL << 63)
#define PAGEMAP_SWAP_BIT	(1ULL << 62)
#define PAGEMAP_EXCLUSIVE_BIT	(1ULL << 56)	/* the page is mapped exactly once */
#define PAGEMAP_FILE_BIT	(1ULL << 61)	/* file page or shared anon (not PageAnon) */
#define PAGEMAP_PFN_MASK	((1ULL << 55) - 1)
/* /proc/kpageflags bits (include/uapi/linux/kernel-page-flags.h) */
#define KPF_LRU			5
#define KPF_ANON		12
#define KPF_HUGE		17	/* a hugetlb page */
#define KPF_NOPAGE		20
#define KPF_KSM			21
#define KPF_ZERO_PAGE		24	/* the zero page, or the huge zero page */

enum pagemap_state {
	PAGEMAP_ERROR = -1,	/* pagemap could not be read: err says why */
	PAGEMAP_PRESENT,	/* *pfn is the page frame */
	PAGEMAP_NOT_PRESENT,	/* never touched (or unmapped) */
	PAGEMAP_SWAPPED,
	PAGEMAP_PFN_HIDDEN,	/* present, but the PFN reads 0: needs CAP_SYS_ADMIN */
};

/* The raw pagemap entry for hva of pid (0: this process): 0, or -1 (err). */
int pagemap_entry(pid_t pid, uint64_t hva, uint64_t *entry, char *err, size_t errlen);
/* The page frame behind hva in process pid (0: this process). */
enum pagemap_state pagemap_lookup(pid_t pid, uint64_t hva, uint64_t *pfn, char *err,
				  size_t errlen);
/* /proc/kpageflags for pfn (needs root): 0, or -1 (err). */
int kpageflags_read(uint64_t pfn, uint64_t *flags, char *err, size_t errlen);
/*
 * 0 if this kernel's KPF_KSM is set on anonymous pages that are not KSM
 * pages (6.12's stable_page_flags()), which page_inspect_ram() then
 * ignores; 1 otherwise, or when it cannot tell.
 */
int kpageflags_ksm_reliable(void);

/*
 * May a tool poison the page behind an address of one process? Only a
 * page that process maps alone: poisoning the zero page, a KSM page or a
 * page shared with another process would hit memory that is not the
 * target's (a system-wide page, for the zero page).
 */
enum page_verdict {
	PAGE_ERROR = -1,	/* pagemap or kpageflags unreadable: err says why */
	PAGE_OK,
	PAGE_NOT_PRESENT,
	PAGE_SWAPPED,
	PAGE_PFN_HIDDEN,	/* no CAP_SYS_ADMIN */
	PAGE_ZERO,		/* KPF_ZERO_PAGE: the zero page or the huge zero page */
	PAGE_KSM,		/* KPF_KSM */
	PAGE_NO_STRUCT_PAGE,	/* KPF_NOPAGE */
	PAGE_SHARED,		/* pagemap bit 56 (exclusively mapped) clear */
	PAGE_NOT_ANON,		/* pagemap bit 61 set or KPF_ANON clear: page cache, kernel page */
};
/* Pure: a pagemap entry and the kpageflags word of its PFN -> the verdict. */
enum page_verdict page_classify(uint64_t pagemap_entry, uint64_t kpageflags);
/* Why a verdict refuses (or, for PAGE_OK, what the page is), for messages. */
const char *page_verdict_why(enum page_verdict v);
/* The shared memfd a page of hwlab-vmm's guest RAM is in (its slot's backing). */
enum shared_ram {
	SHARED_RAM_NONE,	/* private memory: anonymous pages only */
	SHARED_RAM_HUGETLB,	/* --backing hugetlb-shared: hugetlbfs file pages */
	SHARED_RAM_SHMEM,	/* --backing shmem: tmpfs file pages */
};
/*
 * page_classify(), and with shared (the page is in a slot of hwlab-vmm's
 * --backing hugetlb-shared or shmem, whose maps line memmap_check_maps()
 * accepted) a file page of that kind (hugetlb or not) mapped by this
 * process alone is PAGE_OK too.
 */
enum page_verdict page_classify_ram(uint64_t pagemap_entry, uint64_t kpageflags,
				    enum shared_ram shared);
/* pagemap_entry() + kpageflags_read() + page_classify(); *pfn set when present. */
enum page_verdict page_inspect(pid_t pid, uint64_t hva, uint64_t *pfn, char *err,
			       size_t errlen);
/* The same with page_classify_ram(). */
enum page_verdict page_inspect_ram(pid_t pid, uint64_t hva, enum shared_ram shared, uint64_t *pfn,
				   char *err, size_t errlen);

/*
 * Open DEBUGFS/hwpoison/FILE (corrupt-pfn or corrupt-va) for writing, and
 * only the kernel's injector: no symbolic link in its last three
 * components, no O_CREAT, O_NONBLOCK (a FIFO must neither block us nor
 * receive a PFN), a regular file, and for the real debugfs (debugfs NULL
 * or HWLAB_DEBUGFS) a file on debugfs (fstatfs DEBUGFS_MAGIC). Another
 * debugfs DIR is a stand-in, the tests': its file must still be regular.
 * Opening first lets a tool make its last checks right before the write,
 * with nothing that can block in between. Returns the fd, or -1 with a
 * message in err (errno from the failed call preserved).
 */
int hwpoison_open_injector(const char *debugfs, const char *file, char *err, size_t errlen);
/*
 * Write pfn, or "pid hva", to an injector opened by hwpoison_open_injector()
 * and close it. 0, or -1 with the kernel's answer in err (errno kept).
 */
int hwpoison_write_pfn(int fd, uint64_t pfn, char *err, size_t errlen);
int hwpoison_write_va(int fd, pid_t pid, uint64_t hva, char *err, size_t errlen);
/* Open and write in one go, for a caller with nothing to check in between. */
int hwpoison_corrupt_pfn(const char *debugfs, uint64_t pfn, char *err, size_t errlen);
int hwpoison_corrupt_va(const char *debugfs, pid_t pid, uint64_t hva, char *err, size_t errlen);

#endif
