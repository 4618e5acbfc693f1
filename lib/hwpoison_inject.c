// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include "hwpoison_inject.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
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

enum page_verdict page_inspect(pid_t pid, uint64_t hva, uint64_t *pfn, char *err,
			       size_t errlen)
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
	return page_classify(entry, flags);
}

/* Open DEBUGFS/hwpoison/FILE for writing, saying what is missing if it cannot. */
static int open_injector(const char *debugfs, const char *file, const char *needs, char *err,
			 size_t errlen)
{
	char path[300], dir[256];
	struct stat st;
	int fd, e;

	if (!debugfs)
		debugfs = HWLAB_DEBUGFS;
	snprintf(dir, sizeof(dir), "%s/hwpoison", debugfs);
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	e = errno;
	if (e == ENOENT && stat(dir, &st))
		snprintf(err, errlen, "%s does not exist: mount debugfs (mount -t debugfs none %s) "
			 "on a kernel with CONFIG_HWPOISON_INJECT", dir, debugfs);
	else if (e == ENOENT)
		snprintf(err, errlen, "cannot open %s: %s (%s)", path, strerror(e), needs);
	else
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(e));
	errno = e;
	return -1;
}

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

int hwpoison_corrupt_pfn(const char *debugfs, uint64_t pfn, char *err, size_t errlen)
{
	char buf[32];
	int fd = open_injector(debugfs, "corrupt-pfn", "CONFIG_HWPOISON_INJECT", err, errlen);

	if (fd < 0)
		return -1;
	snprintf(buf, sizeof(buf), "%#" PRIx64 "\n", pfn);
	return write_injector(fd, buf, "corrupt-pfn", err, errlen);
}

int hwpoison_corrupt_va(const char *debugfs, pid_t pid, uint64_t hva, char *err, size_t errlen)
{
	char buf[64];
	int fd = open_injector(debugfs, "corrupt-va", "the kernel needs patch 0002 for corrupt-va",
			       err, errlen);

	if (fd < 0)
		return -1;
	snprintf(buf, sizeof(buf), "%d %#" PRIx64 "\n", (int)pid, hva);
	return write_injector(fd, buf, "corrupt-va", err, errlen);
}
