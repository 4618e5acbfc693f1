// SPDX-License-Identifier: GPL-2.0
/*
 * Runs inside the outer VM: poisons one anonymous page of its own with
 * MADV_HWPOISON, touches it, and checks that the kernel's late-kill path
 * answers with SIGBUS BUS_MCEERR_AR at exactly that page with si_addr_lsb 12,
 * and that /proc/meminfo's HardwareCorrupted grew by one page.
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

int main(void)
{
	struct sigaction sa = { .sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO };
	long page = sysconf(_SC_PAGESIZE);
	volatile char *p;
	long before, after;
	volatile int got_signal = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	sigaction(SIGBUS, &sa, NULL);
	p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	p[0] = 1;	/* a private page, not the shared zero page */
	before = hardware_corrupted_kb();
	if (madvise((void *)p, page, MADV_HWPOISON)) {
		check(0, "madvise-hwpoison", "madvise(MADV_HWPOISON) failed: %m");
		return failures;
	}
	after = hardware_corrupted_kb();
	if (sigsetjmp(recover, 1) == 0)
		(void)p[0];
	else
		got_signal = 1;

	check(got_signal, "sigbus-on-access", "touching the poisoned page %s",
	      got_signal ? "raised SIGBUS" : "did not raise SIGBUS");
	check(caught.si_code == BUS_MCEERR_AR, "sigbus-code-ar", "si_code=%d (BUS_MCEERR_AR=%d)",
	      caught.si_code, BUS_MCEERR_AR);
	check(caught.si_addr == (void *)p, "sigbus-addr", "si_addr=%p page=%p",
	      caught.si_addr, (void *)p);
	check(caught.si_addr_lsb == 12, "sigbus-lsb", "si_addr_lsb=%d", caught.si_addr_lsb);
	check(before >= 0 && after - before == page / 1024, "meminfo-hardware-corrupted",
	      "HardwareCorrupted %ld kB -> %ld kB", before, after);
	return failures;
}
