// SPDX-License-Identifier: GPL-2.0
/*
 * Runs inside the outer VM (the hugepages scenario): read() of a hugetlbfs
 * file whose 2 MiB page has one poisoned subpage, as hwlab-vmm's salvage
 * reads its guest RAM (kernel series 8/10-10/10, 38c1ddbde6c6 upstream).
 * A memfd of one huge page, mapped shared and filled with a pattern; one
 * subpage poisoned with MADV_HWPOISON (late kill: no signal); then read():
 *   - each other subpage on its own: 4096 bytes, its pattern;
 *   - the poisoned one: EIO;
 *   - from the start: the bytes before the poisoned subpage, then stop;
 *   - from the next subpage: the rest of the huge page.
 * Without the series every read of that huge page fails with EIO.
 *
 * Prints "HWLAB-CHECK PASS|FAIL name: detail" lines; exit status is the
 * number of failed checks. It poisons a page: it refuses to run outside
 * the outer VM's image (/hwlab/scenarios).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "check.h"

#ifndef MFD_HUGE_2MB
#define MFD_HUGE_2MB (21U << 26)
#endif
#define HUGE	(2UL << 20)
#define PAGE	4096UL
#define BAD	300UL

static int pattern(unsigned long i)
{
	return (int)(1 + i % 251);
}

int main(void)
{
	static unsigned char buf[HUGE];
	unsigned long i, good = 0, first_bad = 0, nbad = 0;
	int fd;
	ssize_t n;
	char *p;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (access("/hwlab/scenarios/_lib.sh", F_OK)) {
		fprintf(stderr, "hugetlb_read: poisons a page: it runs only in the outer VM\n");
		return 2;
	}
	prctl(PR_MCE_KILL, PR_MCE_KILL_SET, PR_MCE_KILL_LATE, 0, 0);
	fd = memfd_create("hugetlb-read", MFD_CLOEXEC | MFD_HUGETLB | MFD_HUGE_2MB);
	if (fd < 0 || ftruncate(fd, HUGE)) {
		check(0, "hugetlb-read-setup", "a 2 MiB hugetlb memfd: %s (free huge pages?)",
		      strerror(errno));
		return failures;
	}
	p = mmap(NULL, HUGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		check(0, "hugetlb-read-setup", "mmap: %s", strerror(errno));
		return failures;
	}
	for (i = 0; i < HUGE / PAGE; i++)
		memset(p + i * PAGE, pattern(i), PAGE);
	if (madvise(p + BAD * PAGE, PAGE, MADV_HWPOISON)) {
		check(0, "hugetlb-read-poison", "madvise(MADV_HWPOISON): %s", strerror(errno));
		return failures;
	}
	for (i = 0; i < HUGE / PAGE; i++) {
		errno = 0;
		n = pread(fd, buf, PAGE, (off_t)(i * PAGE));
		if (i == BAD) {
			check(n < 0 && errno == EIO, "hugetlb-read-bad-eio",
			      "the poisoned subpage %lu: EIO (got %zd, %s)", i, n, strerror(errno));
			continue;
		}
		if (n == (ssize_t)PAGE && buf[0] == pattern(i) && buf[PAGE - 1] == pattern(i))
			good++;
		else if (!nbad++)
			first_bad = i;
	}
	check(good == HUGE / PAGE - 1, "hugetlb-read-healthy",
	      "%lu of the %lu healthy subpages read back with their data (%lu not, the first: "
	      "subpage %lu)", good, HUGE / PAGE - 1, nbad, first_bad);
	n = pread(fd, buf, HUGE, 0);
	check(n == (ssize_t)(BAD * PAGE), "hugetlb-read-up-to-bad",
	      "a read of the whole huge page stops before the poisoned subpage (%zd bytes, "
	      "want %lu)", n, BAD * PAGE);
	n = pread(fd, buf, HUGE - (BAD + 1) * PAGE, (off_t)((BAD + 1) * PAGE));
	check(n == (ssize_t)(HUGE - (BAD + 1) * PAGE) && buf[0] == pattern(BAD + 1),
	      "hugetlb-read-after-bad", "a read from the next subpage gets the rest (%zd bytes)",
	      n);
	return failures;
}
