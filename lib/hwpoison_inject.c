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

#define PAGEMAP_PRESENT_BIT	(1ULL << 63)
#define PAGEMAP_SWAP_BIT	(1ULL << 62)
#define PAGEMAP_PFN_MASK	((1ULL << 55) - 1)

enum pagemap_state pagemap_lookup(pid_t pid, uint64_t hva, uint64_t *pfn, char *err,
				  size_t errlen)
{
	char path[64];
	uint64_t entry;
	ssize_t n;
	int fd;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/pagemap");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		return PAGEMAP_ERROR;
	}
	n = pread(fd, &entry, sizeof(entry), hva / 4096 * sizeof(entry));
	if (n != sizeof(entry)) {
		snprintf(err, errlen, "cannot read %s: %s", path, n < 0 ? strerror(errno) :
			 "short read");
		close(fd);
		return PAGEMAP_ERROR;
	}
	close(fd);
	if (!(entry & PAGEMAP_PRESENT_BIT))
		return entry & PAGEMAP_SWAP_BIT ? PAGEMAP_SWAPPED : PAGEMAP_NOT_PRESENT;
	*pfn = entry & PAGEMAP_PFN_MASK;
	if (!*pfn) {
		snprintf(err, errlen, "%s shows no PFNs: reading them needs CAP_SYS_ADMIN "
			 "(run as root)", path);
		return PAGEMAP_PFN_HIDDEN;
	}
	return PAGEMAP_PRESENT;
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
