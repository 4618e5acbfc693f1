// SPDX-License-Identifier: GPL-2.0
/*
 * Test hook: poison guest pages from inside the VMM at a known point of the
 * guest's workload (the end of a pass), either with madvise(MADV_HWPOISON)
 * or through the debugfs corrupt-pfn injector with the PFN from pagemap.
 * Both end in the kernel's memory_failure(), as a real memory error would.
 */
#define _GNU_SOURCE
#include "hwlab/poison_hook.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "hwpoison_inject.h"
#include "mce/mce_delivery.h"
#include "mce/sigbus.h"
#include "core/report.h"
#include "core/vm.h"

/* the hook ran: it runs once per process (one VM), a reset included */
static int fired;

static int expect_early_kill(const struct vmm_options *opt)
{
	char c = '0';
	int fd;

	if (opt->mce_kill >= 0)
		return opt->mce_kill == PR_MCE_KILL_EARLY;
	fd = open("/proc/sys/vm/memory_failure_early_kill", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (read(fd, &c, 1) != 1)
			c = '0';
		close(fd);
	}
	return c == '1';
}

/* The kernel's AR to madvise's caller: reported, and told as an AO if early */
static void madvise_ar_said(const struct sigbus_event *ev, int early)
{
	report("sigbus", "\"si_code\":\"BUS_MCEERR_AR\",\"hva\":\"%#lx\",\"lsb\":%d,"
	       "\"origin\":\"madvise\",\"action\":\"%s\"", (unsigned long)ev->addr, ev->lsb,
	       early ? "told_as_ao" : "ignore");
	if (early)
		sigbus_queue_ao(ev);
}

/*
 * madvise(MADV_HWPOISON) of the page at hva. Since Linux 6.11 the kernel
 * signals the caller, BUS_MCEERR_AR from inside the call, and no early-kill
 * thread: say so, and where the run expects early kill hand the monitor
 * the AO a real error would have brought (on 6.1 the monitor gets that AO
 * from the kernel, and the caller nothing).
 */
static int madvise_poison(const struct vmm_options *opt, void *hva)
{
	struct sigbus_event ev[2];
	int r, got, early = expect_early_kill(opt);

	r = sigbus_madvise_hwpoison(hva, ev, &got);
	/* the page, then another mapping of it, if the VMM had one */
	if (got & 1)
		madvise_ar_said(&ev[0], early);
	if (got & 2)
		madvise_ar_said(&ev[1], early);
	return r;
}

/*
 * Poison memory that is not guest RAM. With early kill the kernel sends AO
 * for it, which the VMM must ignore; otherwise read it, as a VMM bug or a
 * device model would: that consumption cannot be handed to the guest and
 * ends the VMM with a fatal report (sigbus.c).
 */
static int poison_own_heap(struct vm *vm)
{
	const struct vmm_options *opt = vm->opt;
	unsigned long ao_before = mce_delivery_ao_handled(vm);
	static volatile uint8_t *heap;
	int r;

	heap = aligned_alloc(4096, 4096);
	if (!heap)
		return -1;
	heap[0] = 1;
	r = madvise_poison(opt, (void *)heap);
	report("poison_hook", "\"target\":\"vmm-heap\",\"hva\":\"%p\",\"method\":\"madvise\","
	       "\"ok\":%s", (void *)heap, r ? "false" : "true");
	if (r)
		return -1;
	if (expect_early_kill(opt)) {
		/* until the monitor has reported the AO (a bound, not a delay) */
		mce_delivery_wait_ao_handled(vm, ao_before + 1, 5);
		return 0;
	}
	return heap[0];	/* consumes the poison: SIGBUS AR, fatal */
}

/* Poison the page at hva; 0, or -1 with a reason in err. */
static int poison_page(const struct vmm_options *opt, uint8_t *hva, uint64_t *pfn, char *err,
		       size_t errlen)
{
	if (!opt->poison_corrupt_pfn) {
		if (!madvise_poison(opt, hva))
			return 0;
		snprintf(err, errlen, "madvise(MADV_HWPOISON): %s", strerror(errno));
		return -1;
	}
	switch (pagemap_lookup(0, (uintptr_t)hva, pfn, err, errlen)) {
	case PAGEMAP_PRESENT:
		return hwpoison_corrupt_pfn(NULL, *pfn, err, errlen);
	case PAGEMAP_NOT_PRESENT:
	case PAGEMAP_SWAPPED:
		snprintf(err, errlen, "no PFN in /proc/self/pagemap (not present)");
		return -1;
	default:
		return -1;	/* err says why */
	}
}

int poison_hook_run(struct vcpu *v)
{
	const struct vmm_options *opt = v->vm->opt;
	unsigned long ao_before = mce_delivery_ao_handled(v->vm);
	unsigned int i, expected = 0;

	/*
	 * Once per run: the pass number comes from the guest, which may repeat
	 * it; poisoning again would hit pages that are already gone.
	 */
	if (fired)
		return 0;
	fired = 1;
	for (i = 0; i < opt->nr_poison; i++) {
		uint64_t gpa = opt->poison_gpas[i], pfn = 0;
		uint8_t *hva = memslot_gpa_to_hva(&v->vm->mem, gpa, 1);
		const char *method = opt->poison_corrupt_pfn ? "corrupt-pfn" : "madvise";
		char err[256], reason[300];

		if (!hva) {
			report("poison_hook", "\"gpa\":\"%#llx\",\"ok\":false,"
			       "\"reason\":\"GPA not in guest RAM\"", (unsigned long long)gpa);
			return -1;
		}
		hva = (uint8_t *)((uintptr_t)hva & ~0xfffUL);
		if (poison_page(opt, hva, &pfn, err, sizeof(err))) {
			json_escape(reason, sizeof(reason), err);
			report("poison_hook", "\"gpa\":\"%#llx\",\"hva\":\"%p\",\"pfn\":\"%#llx\","
			       "\"method\":\"%s\",\"ok\":false,\"reason\":\"%s\"",
			       (unsigned long long)gpa, (void *)hva, (unsigned long long)pfn, method,
			       reason);
			/* pagemap unreadable: nothing was poisoned, the run is broken */
			if (opt->poison_corrupt_pfn && !pfn)
				return -1;
			/* the kernel refuses a page it already poisoned (EBUSY): not an error */
			continue;
		}
		report("poison_hook", "\"gpa\":\"%#llx\",\"hva\":\"%p\",\"pfn\":\"%#llx\","
		       "\"method\":\"%s\",\"ok\":true", (unsigned long long)gpa, (void *)hva,
		       (unsigned long long)pfn, method);
		expected++;
		/*
		 * With early kill the kernel sends BUS_MCEERR_AO to the monitor
		 * thread; wait until the monitor has dealt with it (queued it
		 * for a vCPU, or said why not) before the next page, and before
		 * the guest runs on (otherwise it might consume the poison first
		 * and the scenario would test the AR path instead). One at a
		 * time because SIGBUS is not a queued signal: a second AO sent
		 * while the first is still pending is lost (seen with the
		 * slower ASan build: 35 of 40 arrived).
		 */
		if (expect_early_kill(opt))
			mce_delivery_wait_ao_handled(v->vm, ao_before + expected, 5);
	}
	if (opt->poison_vmm_heap)
		return poison_own_heap(v->vm) < 0 ? -1 : 0;
	return 0;
}
