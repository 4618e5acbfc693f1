// SPDX-License-Identifier: GPL-2.0
/*
 * hwpoison-guest's write: the injector opened first, then the last checks,
 * then the write, with nothing that can block in between (why this order,
 * and the window no check can close: tools/hwpoison-guest.c).
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "clock.h"
#include "hwpoison_guest.h"
#include "hwpoison_inject.h"
#include "log.h"
#include "memmap.h"

/*
 * Test hook (documented in tools/hwpoison-guest.c): stop after the injector is
 * open and before the last checks, so a test can change the target there
 * (kill the VMM) and see the write refused. It only pauses the tool.
 */
#define TEST_STOP_ENV	"HWPOISON_GUEST_TEST_STOP_BEFORE_RECHECK"

uint64_t hwpoison_guest_poison(const struct hwpoison_guest *g, pid_t pid, const struct memmap *m,
			       uint64_t gpa)
{
	int use_corrupt_va = g->opt.corrupt_va;
	uint64_t hva = guest_page_hva(m, gpa, pid) & ~(PAGE - 1);
	/* also for --corrupt-va: the kernel would poison a zero page just as well */
	enum shared_ram shared = guest_page_shared_ram(m, gpa);
	uint64_t pfn = guest_page_pfn(pid, hva, gpa, shared, g->opt.wait_present_s);
	uint64_t t;
	char err[300];
	int fd, r;

	/*
	 * The injector first: whatever may block or take long (a FIFO planted
	 * there, a slow path) happens before the last checks, not between them
	 * and the write.
	 */
	fd = hwpoison_open_injector(g->opt.debugfs, use_corrupt_va ? "corrupt-va" : "corrupt-pfn",
				    err, sizeof(err));
	if (fd < 0)
		die("%s", err);
	if (getenv(TEST_STOP_ENV))
		raise(SIGSTOP);
	/*
	 * The last checks, right before the write: pid is still the process
	 * every check was made on (first, for the clear message when it is
	 * gone), the page is still the same and the VMM's alone (corrupt-va
	 * resolves pid and address in the kernel instead), and, after that
	 * pagemap read, still the same process, holding its table.
	 */
	target_check_same_process(g, pid);
	if (shared != SHARED_RAM_NONE)
		guest_page_check_file_unshared(pid, hva, gpa);
	if (!use_corrupt_va)
		guest_page_recheck_pfn(pid, hva, gpa, shared, pfn);
	target_check_same_process(g, pid);
	target_check_table_held(g, pid);
	/* t_ns: just before the write, the start of every latency measured from it */
	t = monotonic_ns();
	if (use_corrupt_va)
		r = hwpoison_write_va(fd, pid, hva, err, sizeof(err));
	else
		r = hwpoison_write_pfn(fd, pfn, err, sizeof(err));
	if (r)
		die("%s", err);
	printf("{\"event\":\"poison\",\"pid\":%d,\"gpa\":\"%#" PRIx64 "\",\"hva\":\"%#" PRIx64
	       "\",\"pfn\":\"%#" PRIx64 "\",\"t_ns\":%" PRIu64 "}\n", pid,
	       (uint64_t)(gpa & ~(PAGE - 1)), hva, pfn, t);
	fflush(stdout);
	return t;
}
