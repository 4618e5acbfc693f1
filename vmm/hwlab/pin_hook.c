// SPDX-License-Identifier: GPL-2.0
/*
 * Test option --pin-gpa: hold a reference to one guest page for the whole
 * run, as a device doing DMA to guest RAM does (VFIO pins the pages it
 * maps). A THP with a reference beyond its mappings' cannot be split, and
 * memory_failure() splits a THP before it isolates a poisoned page of it:
 * with the reference held, each host kernel shows what it does instead
 * (tests/integration/scenarios/host_thp_pinned.sh).
 *
 * The reference is the one vmsplice(2) takes for each page it puts into a
 * pipe: the VMM keeps the pipe open and never reads it, so the page stays
 * referenced until the VMM exits. The page is written first (a zero, over
 * fresh memory that holds zeroes: nothing changes for the guest), so that
 * the page referenced is the one the guest will use: a read fault would map
 * the shared zero page (of a THP range, the huge zero page) and the guest's
 * first write would then move to a new page.
 */
#define _GNU_SOURCE
#include "hwlab/pin_hook.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/report.h"
#include "core/vm.h"

#define PIN_PAGE_SIZE 4096UL

int pin_hook_setup(struct vm *vm)
{
	const struct vmm_options *opt = vm->opt;
	uint8_t *hva = memslot_gpa_to_hva(&vm->mem, opt->pin_gpa & ~(PIN_PAGE_SIZE - 1),
					  PIN_PAGE_SIZE);
	struct iovec iov = { .iov_base = hva, .iov_len = PIN_PAGE_SIZE };
	int pipefd[2];
	ssize_t n;

	if (!opt->pin)
		return 0;
	if (!hva) {
		report("pin", "\"gpa\":\"%#llx\",\"ok\":false,\"reason\":\"GPA not in guest RAM\"",
		       (unsigned long long)opt->pin_gpa);
		return -1;
	}
	*(volatile uint64_t *)hva = 0;
	/* both ends stay open until exit: the write end's buffer holds the page */
	if (pipe2(pipefd, O_CLOEXEC)) {
		report("pin", "\"gpa\":\"%#llx\",\"ok\":false,\"reason\":\"pipe: %s\"",
		       (unsigned long long)opt->pin_gpa, strerror(errno));
		return -1;
	}
	n = vmsplice(pipefd[1], &iov, 1, 0);
	if (n != (ssize_t)PIN_PAGE_SIZE) {
		report("pin", "\"gpa\":\"%#llx\",\"ok\":false,\"reason\":\"vmsplice: %s\"",
		       (unsigned long long)opt->pin_gpa, n < 0 ? strerror(errno) : "short");
		close(pipefd[0]);
		close(pipefd[1]);
		return -1;
	}
	report("pin", "\"gpa\":\"%#llx\",\"hva\":\"%p\",\"bytes\":%lu,\"how\":\"vmsplice\","
	       "\"ok\":true", (unsigned long long)(opt->pin_gpa & ~(PIN_PAGE_SIZE - 1)),
	       (void *)hva, PIN_PAGE_SIZE);
	return 0;
}
