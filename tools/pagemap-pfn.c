// SPDX-License-Identifier: GPL-2.0
/*
 * pagemap-pfn: the PFN behind a process's virtual address, read from
 * /proc/PID/pagemap, on the host and in the outer VM (no python there).
 *
 *   pagemap-pfn PID HVA
 *   pagemap-pfn --pagemap FILE HVA    (a file in pagemap's format: fixtures)
 *   pagemap-pfn --flags PID HVA       (the PFN, then its /proc/kpageflags word)
 *
 * Prints the PFN in hex (0x1234), the form hwpoison-guest reports and writes
 * to corrupt-pfn, so a check can compare the two as strings. With --flags,
 * a blank and the page's kpageflags word in hex follow (needs root), so that
 * a check can tell a KSM page (bit 21) or a THP (bit 22) apart. HVA is hex
 * (0x...) or decimal, without a leading zero (lib/parse_num.c: "0612000"
 * is neither octal nor hex); any address inside the page will do.
 *
 * A check asks "is the PFN the tool wrote the one pagemap shows?": an
 * answer that is not a PFN must not look like one. So each of these is a
 * message on stderr and exit 1, never a number on stdout:
 *   - no such process (or its pagemap cannot be read),
 *   - the page is not present (entry bit 63 clear: never touched, swapped out),
 *   - the PFN is hidden (present, but PFN 0: the kernel shows PFNs only to
 *     CAP_SYS_ADMIN, and PFN 0 is never a user page),
 *   - HVA past the end of the user address space (pagemap has no entry).
 * Bad arguments: usage on stderr, exit 2.
 *
 * What is opened: for PID, /proc/PID/pagemap by a name made from the number
 * (never /proc/self, a symlink) and checked to be a regular file on procfs,
 * so a pagemap is read from the kernel and nothing else; O_NOFOLLOW there
 * would be pointless, as nothing in that path is a symlink. A --pagemap
 * FILE is the caller's fixture: opened with O_NOFOLLOW and O_NONBLOCK and
 * refused unless a regular file, so a symlink is not followed and a FIFO
 * or device neither blocks nor is read.
 *
 * Entry layout: lib/hwpoison_inject.h (Documentation/admin-guide/mm/pagemap.rst).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "hwpoison_inject.h"
#include "parse_num.h"
#include "log.h"

#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC	0x9fa0
#endif

static const char prog[] = "pagemap-pfn";

#define usage(...) tool_exit(2, "PID HVA | --pagemap FILE HVA | --flags PID HVA", __VA_ARGS__)

#define fail(...) tool_exit(1, NULL, __VA_ARGS__)

static uint64_t number(const char *what, const char *text)
{
	uint64_t v;

	if (text[0] == '-' && !parse_u64(text + 1, UINT64_MAX, &v))
		usage("%s '%s' is negative", what, text);
	if (parse_u64(text, UINT64_MAX, &v))
		usage("%s '%s' is not a number (hex 0x... or decimal)", what, text);
	return v;
}

/* The pagemap entry for hva; who names the process (or the file) in messages. */
static uint64_t read_entry(const char *path, int fixture, uint64_t hva, const char *who)
{
	long page = sysconf(_SC_PAGESIZE);
	uint64_t entry;
	struct statfs fs;
	struct stat st;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | (fixture ? O_NOFOLLOW | O_NONBLOCK : 0));
	if (fd < 0) {
		if (errno == ENOENT && !fixture)
			fail("no such process: %s (%s)", who, path);
		if (errno == ELOOP && fixture)
			fail("cannot read %s: a symbolic link: refusing to follow it", path);
		fail("cannot read %s: %s", path, strerror(errno));
	}
	if (fstat(fd, &st))
		fail("cannot read %s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		fail("cannot read %s: not a regular file", path);
	if (!fixture && (fstatfs(fd, &fs) || fs.f_type != PROC_SUPER_MAGIC))
		fail("cannot read %s: not on procfs", path);
	/* at most 2^64 / 4096 * 8 = 2^55: an offset pread takes */
	n = pread(fd, &entry, sizeof(entry), (off_t)(hva / (uint64_t)page * sizeof(entry)));
	if (n < 0)
		fail("cannot read %s: %s", path, strerror(errno));
	close(fd);
	if (n != sizeof(entry))
		fail("%s has no entry for 0x%" PRIx64 ": past the end of the user address space",
		     path, hva);
	return entry;
}

int main(int argc, char **argv)
{
	char path[64], pid_who[64];
	const char *file, *who;
	uint64_t pid, hva, entry, pfn, flags;
	int fixture = 0, with_flags = 0;
	char err[256];

	log_prog = prog;
	if (argc == 4 && !strcmp(argv[1], "--flags")) {
		with_flags = 1;
		argc--;
		argv++;
	}
	if (argc == 4 && !with_flags && !strcmp(argv[1], "--pagemap")) {
		fixture = 1;
		file = argv[2];
		who = file;
		hva = number("HVA", argv[3]);
	} else if (argc == 3 && argv[1][0] != '-') {
		pid = number("PID", argv[1]);
		if (!pid)
			usage("PID 0 is not a process");
		snprintf(path, sizeof(path), "/proc/%" PRIu64 "/pagemap", pid);
		snprintf(pid_who, sizeof(pid_who), "pid %" PRIu64, pid);
		file = path;
		who = pid_who;
		hva = number("HVA", argv[2]);
	} else {
		usage("want PID HVA, --pagemap FILE HVA or --flags PID HVA");
	}
	entry = read_entry(file, fixture, hva, who);
	if (!(entry & PAGEMAP_PRESENT_BIT))
		fail("%s: the page at 0x%" PRIx64 " is not present (pagemap entry 0x%016" PRIx64 "%s)",
		     who, hva, entry,
		     entry & PAGEMAP_SWAP_BIT ? ", swapped out" : "");
	pfn = entry & PAGEMAP_PFN_MASK;
	if (!pfn)
		fail("%s: the page at 0x%" PRIx64 " is present but its PFN is hidden (0): the kernel "
		     "shows PFNs only to CAP_SYS_ADMIN", who, hva);
	if (!with_flags) {
		printf("0x%" PRIx64 "\n", pfn);
		return 0;
	}
	if (kpageflags_read(pfn, &flags, err, sizeof(err)))
		fail("%s", err);
	printf("0x%" PRIx64 " 0x%" PRIx64 "\n", pfn, flags);
	return 0;
}
