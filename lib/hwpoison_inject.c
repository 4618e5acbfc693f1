// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include "hwpoison_inject.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

int pagemap_entry(pid_t pid, uint64_t hva, uint64_t *entry, char *err, size_t errlen)
{
	char path[64];
	ssize_t n;
	int fd;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/pagemap");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	n = pread(fd, entry, sizeof(*entry), hva / 4096 * sizeof(*entry));
	if (n != sizeof(*entry)) {
		snprintf(err, errlen, "cannot read %s: %s", path, n < 0 ? strerror(errno) :
			 "short read");
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

static void pfn_hidden(pid_t pid, char *err, size_t errlen)
{
	snprintf(err, errlen, "/proc/%d/pagemap shows no PFNs: reading them needs CAP_SYS_ADMIN "
		 "(run as root)", (int)pid);
}

enum pagemap_state pagemap_lookup(pid_t pid, uint64_t hva, uint64_t *pfn, char *err,
				  size_t errlen)
{
	uint64_t entry;

	if (pagemap_entry(pid, hva, &entry, err, errlen))
		return PAGEMAP_ERROR;
	if (!(entry & PAGEMAP_PRESENT_BIT))
		return entry & PAGEMAP_SWAP_BIT ? PAGEMAP_SWAPPED : PAGEMAP_NOT_PRESENT;
	*pfn = entry & PAGEMAP_PFN_MASK;
	if (!*pfn) {
		pfn_hidden(pid ? pid : getpid(), err, errlen);
		return PAGEMAP_PFN_HIDDEN;
	}
	return PAGEMAP_PRESENT;
}

int kpageflags_read(uint64_t pfn, uint64_t *flags, char *err, size_t errlen)
{
	static const char path[] = "/proc/kpageflags";
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0) {
		snprintf(err, errlen, "cannot open %s: %s (needs root and CONFIG_PROC_PAGE_MONITOR)",
			 path, strerror(errno));
		return -1;
	}
	n = pread(fd, flags, sizeof(*flags), pfn * sizeof(*flags));
	close(fd);
	if (n != sizeof(*flags)) {
		snprintf(err, errlen, "cannot read %s for pfn %#" PRIx64 ": %s", path, pfn,
			 n < 0 ? strerror(errno) : "past its end");
		return -1;
	}
	return 0;
}

enum page_verdict page_classify(uint64_t entry, uint64_t kpageflags)
{
	if (!(entry & PAGEMAP_PRESENT_BIT))
		return entry & PAGEMAP_SWAP_BIT ? PAGE_SWAPPED : PAGE_NOT_PRESENT;
	if (!(entry & PAGEMAP_PFN_MASK))
		return PAGE_PFN_HIDDEN;
	/*
	 * The zero pages first: they are never exclusive either, but "shared"
	 * would hide that the guest only read this address.
	 */
	if (kpageflags & (1ULL << KPF_ZERO_PAGE))
		return PAGE_ZERO;
	if (kpageflags & (1ULL << KPF_KSM))
		return PAGE_KSM;
	if (kpageflags & (1ULL << KPF_NOPAGE))
		return PAGE_NO_STRUCT_PAGE;
	/*
	 * Guest RAM is private anonymous memory (hugetlb MAP_PRIVATE pages are
	 * PageAnon too). "Mapped once" alone also holds for a page-cache page
	 * of the VMM's own binary or a kernel page such as kvm_run: refuse
	 * whatever is not anonymous.
	 */
	if (entry & PAGEMAP_FILE_BIT)
		return PAGE_NOT_ANON;
	if (!(entry & PAGEMAP_EXCLUSIVE_BIT))
		return PAGE_SHARED;
	if (!(kpageflags & (1ULL << KPF_ANON)))
		return PAGE_NOT_ANON;
	return PAGE_OK;
}

enum page_verdict page_classify_ram(uint64_t entry, uint64_t kpageflags, enum shared_ram shared)
{
	enum page_verdict v = page_classify(entry, kpageflags);
	int huge = !!(kpageflags & (1ULL << KPF_HUGE));

	/*
	 * A page of hwlab-vmm's shared memfd is a file page, never PageAnon:
	 * take it when it is of the slot's kind (a hugetlb page for
	 * hugetlb-shared, a 4 KiB one for shmem) and mapped by the VMM alone
	 * (pagemap's exclusive bit: map count 1), as the anonymous rule wants
	 * of an anonymous page. Anything else stays refused.
	 */
	if (v == PAGE_NOT_ANON && shared != SHARED_RAM_NONE && (entry & PAGEMAP_FILE_BIT) &&
	    huge == (shared == SHARED_RAM_HUGETLB) && !(kpageflags & (1ULL << KPF_ANON)))
		return entry & PAGEMAP_EXCLUSIVE_BIT ? PAGE_OK : PAGE_SHARED;
	return v;
}

const char *page_verdict_why(enum page_verdict v)
{
	switch (v) {
	case PAGE_OK:
		return "a page mapped by this process alone";
	case PAGE_NOT_PRESENT:
		return "not present: the guest never touched it";
	case PAGE_SWAPPED:
		return "swapped out: no page frame to poison";
	case PAGE_PFN_HIDDEN:
		return "pagemap hides its PFN: reading PFNs needs CAP_SYS_ADMIN (run as root)";
	case PAGE_ZERO:
		return "the shared zero page (the guest only read it): poisoning it would hit "
		       "every process that reads untouched memory";
	case PAGE_KSM:
		return "a KSM page, merged with identical pages of other processes";
	case PAGE_NO_STRUCT_PAGE:
		return "a PFN without a struct page (not RAM the kernel manages)";
	case PAGE_SHARED:
		return "not mapped by this process alone (shared after fork, or with another "
		       "mapping): poisoning it would hit the others too";
	case PAGE_NOT_ANON:
		return "not anonymous memory (a page-cache page of a file, or a kernel page such "
		       "as a vCPU's kvm_run): not guest RAM";
	case PAGE_ERROR:
		break;
	}
	return "?";
}

/*
 * Whether this kernel's KPF_KSM can be believed. Debian's 6.12.118
 * (fs/proc/page.c, stable_page_flags()) sets it when folio->mapping &
 * PAGE_MAPPING_KSM, and PAGE_MAPPING_KSM is PAGE_MAPPING_ANON |
 * PAGE_MAPPING_MOVABLE: every anonymous page reads as a KSM page there
 * (6.1 asks PageKsm(), 7.2.13 compares both bits), and every page of guest
 * RAM was refused as one. Asked once, of a page that cannot be a KSM page:
 * one of our own, mapped and written just now (ksmd merges only a page it
 * has seen unchanged over two scans). An answer that cannot be had keeps
 * the flag believed: the refusal stays.
 */
int kpageflags_ksm_reliable(void)
{
	static int reliable = -1;
	uint64_t pfn, flags;
	char err[160];
	volatile uint64_t *page;

	if (reliable >= 0)
		return reliable;
	reliable = 1;
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return reliable;
	page[0] = (uintptr_t)page ^ (uint64_t)getpid();
	if (pagemap_lookup(0, (uintptr_t)page, &pfn, err, sizeof(err)) == PAGEMAP_PRESENT &&
	    !kpageflags_read(pfn, &flags, err, sizeof(err)) && (flags & (1ULL << KPF_ANON)) &&
	    (flags & (1ULL << KPF_KSM)))
		reliable = 0;
	munmap((void *)page, 4096);
	return reliable;
}

enum page_verdict page_inspect_ram(pid_t pid, uint64_t hva, enum shared_ram shared, uint64_t *pfn,
				   char *err, size_t errlen)
{
	uint64_t entry, flags = 0;
	enum page_verdict v;

	if (pagemap_entry(pid, hva, &entry, err, errlen))
		return PAGE_ERROR;
	*pfn = entry & PAGEMAP_PFN_MASK;
	v = page_classify(entry, 0);
	/* only a page that is there has flags worth reading */
	if (v != PAGE_OK && v != PAGE_SHARED && v != PAGE_NOT_ANON)
		return v;
	if (kpageflags_read(*pfn, &flags, err, errlen))
		return PAGE_ERROR;
	/*
	 * where the kernel says KSM of every anonymous page, a KSM page is
	 * still refused if other mappings share it (pagemap's exclusive bit);
	 * one mapped by the VMM alone is the VMM's to lose
	 */
	if ((flags & (1ULL << KPF_KSM)) && !kpageflags_ksm_reliable())
		flags &= ~(1ULL << KPF_KSM);
	return page_classify_ram(entry, flags, shared);
}

enum page_verdict page_inspect(pid_t pid, uint64_t hva, uint64_t *pfn, char *err,
			       size_t errlen)
{
	return page_inspect_ram(pid, hva, SHARED_RAM_NONE, pfn, err, errlen);
}

/* ENOENT on the way to DEBUGFS/hwpoison/FILE: say what is missing. */
static void injector_missing(const char *debugfs, const char *dir, const char *path,
			     const char *file, char *err, size_t errlen)
{
	struct stat st;

	if (stat(dir, &st))
		snprintf(err, errlen, "%s does not exist: mount debugfs (mount -t debugfs none %s) "
			 "on a kernel with CONFIG_HWPOISON_INJECT", dir, debugfs);
	else
		snprintf(err, errlen, "cannot open %s: %s (%s)", path, strerror(ENOENT),
			 strcmp(file, "corrupt-va") ? "CONFIG_HWPOISON_INJECT" :
			 "the kernel needs patch 0002 for corrupt-va");
}

int hwpoison_open_injector(const char *debugfs, const char *file, char *err, size_t errlen)
{
	const int nofollow = O_NOFOLLOW | O_CLOEXEC;
	char path[300], dir[256], top[256];
	struct statfs sfs = { 0 };
	struct stat st, real_st, top_st;
	int dfd, hfd, fd, e, real;
	size_t n;

	if (!debugfs)
		debugfs = HWLAB_DEBUGFS;
	/*
	 * Without trailing slashes: "LINK/" makes open() follow LINK whatever
	 * O_NOFOLLOW says, and "/sys/kernel/debug/" is the real debugfs too.
	 */
	snprintf(top, sizeof(top), "%s", debugfs);
	for (n = strlen(top); n > 1 && top[n - 1] == '/'; n--)
		top[n - 1] = 0;
	snprintf(dir, sizeof(dir), "%s/hwpoison", top);
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	/*
	 * No link followed in the last three components, no O_CREAT, and
	 * O_NONBLOCK: a FIFO planted there fails (ENXIO, no reader) or opens
	 * at once, instead of blocking until someone reads the PFN.
	 */
	dfd = open(top, O_RDONLY | O_DIRECTORY | nofollow);
	/* the real one by what it is, not by how it was spelled */
	real = dfd >= 0 && !fstat(dfd, &top_st) && !stat(HWLAB_DEBUGFS, &real_st) &&
	       top_st.st_dev == real_st.st_dev && top_st.st_ino == real_st.st_ino;
	hfd = dfd < 0 ? -1 : openat(dfd, "hwpoison", O_RDONLY | O_DIRECTORY | nofollow);
	fd = hfd < 0 ? -1 : openat(hfd, file, O_WRONLY | O_NONBLOCK | nofollow);
	e = errno;
	if (dfd >= 0)
		close(dfd);
	if (hfd >= 0)
		close(hfd);
	if (fd < 0) {
		if (e == ENOENT)
			injector_missing(debugfs, dir, path, file, err, errlen);
		else if (e == ELOOP || e == ENOTDIR)
			snprintf(err, errlen, "%s: a symbolic link or not a directory on the way: "
				 "not the kernel's injector, refusing it", path);
		else if (e == ENXIO)
			snprintf(err, errlen, "%s is not a regular file (a FIFO or socket with no "
				 "reader): not the kernel's injector, refusing it", path);
		else
			snprintf(err, errlen, "cannot open %s: %s", path, strerror(e));
		errno = e;
		return -1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s is not a regular file: not the kernel's injector, "
			 "refusing it", path);
		goto refuse;
	}
	/* a stand-in (--debugfs DIR, the tests') may be any file; the real one is debugfs */
	if (real && (fstatfs(fd, &sfs) || sfs.f_type != DEBUGFS_MAGIC)) {
		snprintf(err, errlen, "%s is not on debugfs (filesystem type %#lx, not %#x): not "
			 "the kernel's injector, refusing it", path, (unsigned long)sfs.f_type,
			 DEBUGFS_MAGIC);
		goto refuse;
	}
	return fd;
refuse:
	close(fd);
	errno = EINVAL;
	return -1;
}

/* write buf to an open injector, and close it */
static int write_injector(int fd, const char *buf, const char *file, char *err, size_t errlen)
{
	size_t len = strlen(buf);
	ssize_t n = write(fd, buf, len);
	int e = errno;

	close(fd);
	if (n == (ssize_t)len)
		return 0;
	/* the kernel's answer, e.g. EBUSY for a page it poisoned already */
	snprintf(err, errlen, "writing '%.*s' to hwpoison/%s: %s", (int)len - 1, buf, file,
		 n < 0 ? strerror(e) : "short write");
	errno = n < 0 ? e : EIO;
	return -1;
}

int hwpoison_write_pfn(int fd, uint64_t pfn, char *err, size_t errlen)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%#" PRIx64 "\n", pfn);
	return write_injector(fd, buf, "corrupt-pfn", err, errlen);
}

int hwpoison_write_va(int fd, pid_t pid, uint64_t hva, char *err, size_t errlen)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%d %#" PRIx64 "\n", (int)pid, hva);
	return write_injector(fd, buf, "corrupt-va", err, errlen);
}

int hwpoison_corrupt_pfn(const char *debugfs, uint64_t pfn, char *err, size_t errlen)
{
	int fd = hwpoison_open_injector(debugfs, "corrupt-pfn", err, errlen);

	return fd < 0 ? -1 : hwpoison_write_pfn(fd, pfn, err, errlen);
}

int hwpoison_corrupt_va(const char *debugfs, pid_t pid, uint64_t hva, char *err, size_t errlen)
{
	int fd = hwpoison_open_injector(debugfs, "corrupt-va", err, errlen);

	return fd < 0 ? -1 : hwpoison_write_va(fd, pid, hva, err, errlen);
}
