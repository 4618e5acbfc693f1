// SPDX-License-Identifier: GPL-2.0
/*
 * Runs inside the outer VM: poisons one anonymous page of its own with
 * MADV_HWPOISON, touches it, and checks that the kernel's late-kill path
 * answers with SIGBUS BUS_MCEERR_AR at exactly that page with si_addr_lsb 12,
 * and that /proc/meminfo's HardwareCorrupted grew by one page.
 *
 * Where that first SIGBUS comes from depends on the host kernel (argument
 * "madvise" or "access", what the caller expects): since v6.11 (Jane Chu,
 * "mm/madvise: add MF_ACTION_REQUIRED to madvise(MADV_HWPOISON)", in
 * Debian's 6.12 and 7.2, not in 6.1) madvise() itself signals its caller,
 * as a real action-required error would; before, only the access does.
 * Either way the access after it is a SIGBUS AR at the page.
 *
 * Prints "HWLAB-CHECK PASS|FAIL name: detail" lines; exit status is the
 * number of failed checks.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "meminfo.h"

static sigjmp_buf recover;
static volatile siginfo_t caught;

static void on_sigbus(int sig, siginfo_t *info, void *uctx)
{
	(void)sig;
	(void)uctx;
	memcpy((void *)&caught, info, sizeof(*info));
	siglongjmp(recover, 1);
}

/* touch *p; 1 if that raised SIGBUS (its siginfo in caught) */
static int touch_sigbus(volatile char *p)
{
	memset((void *)&caught, 0, sizeof(caught));
	if (sigsetjmp(recover, 1) == 0) {
		(void)p[0];
		return 0;
	}
	return 1;
}

static void check_siginfo(const char *when, volatile char *p)
{
	check(caught.si_code == BUS_MCEERR_AR, "sigbus-code-ar", "%s: si_code=%d (BUS_MCEERR_AR=%d)",
	      when, caught.si_code, BUS_MCEERR_AR);
	check(caught.si_addr == (void *)p, "sigbus-addr", "%s: si_addr=%p page=%p",
	      when, caught.si_addr, (void *)p);
	check(caught.si_addr_lsb == 12, "sigbus-lsb", "%s: si_addr_lsb=%d", when, caught.si_addr_lsb);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO };
	const char *expect = argc > 1 ? argv[1] : "access";
	volatile long page = sysconf(_SC_PAGESIZE);
	volatile char *p;
	long before, after;
	volatile int in_madvise = 0;
	int got_signal;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strcmp(expect, "madvise") && strcmp(expect, "access")) {
		fprintf(stderr, "usage: %s [madvise|access]  (where the first SIGBUS is expected)\n",
			argv[0]);
		return 2;
	}
	sigaction(SIGBUS, &sa, NULL);
	p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	p[0] = 1;	/* a private page, not the shared zero page */
	before = hardware_corrupted_kb();
	/* the handler may run inside madvise() (see the top of the file) */
	if (sigsetjmp(recover, 1) == 0) {
		if (madvise((void *)p, page, MADV_HWPOISON)) {
			check(0, "madvise-hwpoison", "madvise(MADV_HWPOISON) failed: %m");
			return failures;
		}
	} else {
		in_madvise = 1;
	}
	after = hardware_corrupted_kb();
	check(!strcmp(expect, in_madvise ? "madvise" : "access"), "sigbus-first-from",
	      "the first SIGBUS came from %s (this host: %s)",
	      in_madvise ? "madvise() itself" : "the access after madvise()",
	      !strcmp(expect, "madvise") ? "madvise() signals, v6.11 on" : "only the access signals, before v6.11");
	if (in_madvise)
		check_siginfo("madvise", p);

	got_signal = touch_sigbus(p);
	check(got_signal, "sigbus-on-access", "touching the poisoned page %s",
	      got_signal ? "raised SIGBUS" : "did not raise SIGBUS");
	check_siginfo("access", p);
	check(before >= 0 && after - before == page / 1024, "meminfo-hardware-corrupted",
	      "HardwareCorrupted %ld kB -> %ld kB", before, after);
	return failures;
}
