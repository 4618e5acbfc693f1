// SPDX-License-Identifier: GPL-2.0
/*
 * Runs inside the outer VM (the hugepages scenario): read() of a hugetlbfs
 * file whose 2 MiB page has one poisoned subpage, as hwlab-vmm's salvage
 * reads its guest RAM (kernel series 8/10-10/10, 38c1ddbde6c6 upstream).
 * A memfd of one huge page, mapped shared and filled with a pattern; one
 * subpage poisoned with MADV_HWPOISON (late kill: no signal before v6.11;
 * since, the caller's BUS_MCEERR_AR from inside madvise(), naming the page
 * with lsb 21: argument "madvise" says the host does that); then read():
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
#include <signal.h>
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

/* the SIGBUS madvise() brought, if it did (a system call returns: no jump needed) */
static volatile sig_atomic_t got_code, got_lsb;
static void *volatile got_addr;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	got_code = si->si_code;
	got_addr = si->si_addr;
	got_lsb = si->si_addr_lsb;
}

static int pattern(unsigned long i)
{
	return (int)(1 + i % 251);
}

int main(int argc, char **argv)
{
	static unsigned char buf[HUGE];
	unsigned long i, good = 0, first_bad = 0, nbad = 0;
	int signals = argc > 1 && !strcmp(argv[1], "madvise");
	struct sigaction sa = { .sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO };
	int fd;
	ssize_t n;
	char *p;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (access("/hwlab/scenarios/_lib.sh", F_OK)) {
		fprintf(stderr, "hugetlb_read: poisons a page: it runs only in the outer VM\n");
		return 2;
	}
	if (argc > 1 && !signals && strcmp(argv[1], "access")) {
		fprintf(stderr, "usage: %s [madvise|access] (where this host's first SIGBUS comes from)\n",
			argv[0]);
		return 2;
	}
	prctl(PR_MCE_KILL, PR_MCE_KILL_SET, PR_MCE_KILL_LATE, 0, 0);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
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
	if (signals)
		check(got_code == BUS_MCEERR_AR && got_addr == p + BAD * PAGE && got_lsb == 21,
		      "hugetlb-read-madvise-ar", "madvise() answered with BUS_MCEERR_AR for the "
		      "page, lsb 21 (got code %d, %s address, lsb %d)", (int)got_code,
		      got_addr == p + BAD * PAGE ? "its" : "another", (int)got_lsb);
	else
		check(!got_code, "hugetlb-read-madvise-quiet", "late kill: no SIGBUS until an access "
		      "(got code %d)", (int)got_code);
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
