// SPDX-License-Identifier: GPL-2.0
/*
 * Test hook: poison guest pages from inside the VMM at a known point of the
 * guest's workload (the end of a pass), either with madvise(MADV_HWPOISON)
 * or through the debugfs corrupt-pfn injector with the PFN from pagemap.
 * Both end in the kernel's memory_failure(), as a real memory error would.
 */
#define _GNU_SOURCE
#include "vmm.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "report.h"

#define CORRUPT_PFN "/sys/kernel/debug/hwpoison/corrupt-pfn"

static int hva_to_pfn(void *hva, uint64_t *pfn)
{
	uint64_t entry;
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	off_t off = ((uintptr_t)hva / 4096) * sizeof(entry);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = pread(fd, &entry, sizeof(entry), off);
	close(fd);
	if (n != sizeof(entry) || !(entry & (1ULL << 63)))
		return -1;
	*pfn = entry & ((1ULL << 55) - 1);
	return *pfn ? 0 : -1;	/* 0: pagemap hides PFNs from non-root */
}

static int corrupt_pfn(uint64_t pfn)
{
	char buf[32];
	int fd = open(CORRUPT_PFN, O_WRONLY | O_CLOEXEC);
	int len = snprintf(buf, sizeof(buf), "%#llx\n", (unsigned long long)pfn);
	int ok;

	if (fd < 0)
		return -1;
	ok = write(fd, buf, len) == len;
	close(fd);
	return ok ? 0 : -1;
}

static int expect_early_kill(const struct vmm_options *opt)
{
	char c = '0';
	int fd;

	if (opt->mce_kill >= 0)
		return opt->mce_kill == PR_MCE_KILL_EARLY;
	fd = open("/proc/sys/vm/memory_failure_early_kill", O_RDONLY);
	if (fd >= 0) {
		if (read(fd, &c, 1) != 1)
			c = '0';
		close(fd);
	}
	return c == '1';
}

/*
 * With early kill the kernel queues BUS_MCEERR_AO to the monitor thread; wait
 * until it has been turned into an injection for this vCPU, so the guest is
 * told before it runs on (otherwise it might consume the poison first and
 * the scenario would test the AR path instead).
 */
static void wait_for_ao(struct vcpu *v, unsigned int want)
{
	struct timespec deadline;

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 5;
	pthread_mutex_lock(&v->lock);
	while (v->queue_len < want &&
	       pthread_cond_timedwait(&v->queued, &v->lock, &deadline) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&v->lock);
}

/*
 * Poison memory that is not guest RAM. With early kill the kernel sends AO
 * for it, which the VMM must ignore; otherwise read it, as a VMM bug or a
 * device model would: that consumption cannot be handed to the guest and
 * ends the VMM with a fatal report (sigbus.c).
 */
static int poison_own_heap(const struct vmm_options *opt)
{
	static volatile uint8_t *heap;
	int r;

	heap = aligned_alloc(4096, 4096);
	if (!heap)
		return -1;
	heap[0] = 1;
	r = madvise((void *)heap, 4096, MADV_HWPOISON);
	report("poison_hook", "\"target\":\"vmm-heap\",\"hva\":\"%p\",\"method\":\"madvise\","
	       "\"ok\":%s", (void *)heap, r ? "false" : "true");
	if (r)
		return -1;
	if (expect_early_kill(opt)) {
		usleep(200 * 1000);	/* let the monitor report the AO */
		return 0;
	}
	return heap[0];	/* consumes the poison: SIGBUS AR, fatal */
}

int poison_hook_run(struct vcpu *v)
{
	const struct vmm_options *opt = v->vm->opt;
	unsigned int i, expected = 0;

	for (i = 0; i < opt->nr_poison; i++) {
		uint64_t gpa = opt->poison_gpas[i];
		uint8_t *hva = memslot_gpa_to_hva(&v->vm->mem, gpa, 1);
		const char *method = opt->poison_corrupt_pfn ? "corrupt-pfn" : "madvise";
		uint64_t pfn = 0;
		int r;

		if (!hva) {
			report("poison_hook", "\"gpa\":\"%#llx\",\"ok\":false,"
			       "\"reason\":\"GPA not in guest RAM\"", (unsigned long long)gpa);
			return -1;
		}
		hva = (uint8_t *)((uintptr_t)hva & ~0xfffUL);
		if (opt->poison_corrupt_pfn) {
			if (hva_to_pfn(hva, &pfn)) {
				report("poison_hook", "\"gpa\":\"%#llx\",\"ok\":false,\"reason\":"
				       "\"no PFN in /proc/self/pagemap (not present, or not root)\"",
				       (unsigned long long)gpa);
				return -1;
			}
			r = corrupt_pfn(pfn);
		} else {
			r = madvise(hva, 4096, MADV_HWPOISON);
		}
		report("poison_hook", "\"gpa\":\"%#llx\",\"hva\":\"%p\",\"pfn\":\"%#llx\","
		       "\"method\":\"%s\",\"ok\":%s%s%s%s", (unsigned long long)gpa, (void *)hva,
		       (unsigned long long)pfn, method, r ? "false" : "true",
		       r ? ",\"reason\":\"" : "", r ? strerror(errno) : "", r ? "\"" : "");
		/* The kernel refuses a page it already poisoned (EFAULT/EBUSY):
		 * reported above, and not an error of the run. */
		if (!r)
			expected++;
	}
	if (expected && expect_early_kill(opt))
		wait_for_ao(v, expected);
	if (opt->poison_vmm_heap)
		return poison_own_heap(opt) < 0 ? -1 : 0;
	return 0;
}
