// SPDX-License-Identifier: GPL-2.0
/*
 * Which vCPU an action-optional machine check goes to, without KVM: only
 * the monitor-side policy (translate, dedupe, queue, close) runs here; the
 * injection itself needs a vCPU and is covered by the outer-VM scenarios.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"
#include "core/vm.h"
#include "mce/mce_delivery.h"

#define MiB (1ULL << 20)

static struct vm vm;
static struct vmm_options opt = { .nr_vcpus = 2 };
static uint8_t *ram;

static void setup(void)
{
	unsigned int i;

	/* the state of the last setup: the process keeps a real VM's */
	poison_list_free(&vm.poisoned.pages);
	if (vm.poison)
		poison_list_free(&vm.poison->notified);
	free(vm.poison);
	for (i = 0; i < opt.nr_vcpus; i++)
		free(vm.vcpus[i].mce);
	vm = (struct vm) { .opt = &opt };
	vm.mem.count = 1;
	vm.mem.slots[0] = (struct memslot){ .gpa = 0, .size = 16 * MiB, .hva = ram };
	guest_poison_init(&vm.poisoned);
	mce_delivery_init_vm(&vm);
	for (i = 0; i < opt.nr_vcpus; i++) {
		vm.vcpus[i] = (struct vcpu) { .vm = &vm, .id = i };
		vcpu_thread_init(&vm.vcpus[i].thread);
		mce_delivery_init_vcpu(&vm.vcpus[i]);
		mce_delivery_reset_vcpu(&vm.vcpus[i]);
	}
}

static void ao(uint64_t gpa)
{
	struct sigbus_event ev = { .code = BUS_MCEERR_AO, .addr = (uintptr_t)ram + gpa, .lsb = 12 };

	mce_delivery_action_optional(&vm, &ev);
}

/* vCPU 0 leaves its loop: what it still holds is handed on, or reported */
static void close_vcpu0(uint64_t unused)
{
	(void)unused;
	vcpu_thread_close(&vm.vcpus[0].thread);
	mce_delivery_close_vcpu(&vm.vcpus[0]);
}

/* How many report lines of fn(arg) hold text (stdout to a file meanwhile). */
static int said_by(void (*fn)(uint64_t), uint64_t arg, const char *text)
{
	char path[] = "/tmp/hwlab-unit-XXXXXX", line[1024];
	int fd = mkstemp(path), saved = dup(STDOUT_FILENO), found = 0;
	FILE *f;

	fflush(stdout);
	dup2(fd, STDOUT_FILENO);
	fn(arg);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	f = fdopen(fd, "r");
	rewind(f);
	while (fgets(line, sizeof(line), f))
		found += strstr(line, text) != NULL;
	fclose(f);
	unlink(path);
	return found;
}

/* Whether the report line of an AO for gpa holds text. */
static int said(const char *text, uint64_t gpa)
{
	return said_by(ao, gpa, text) > 0;
}

UNIT_TEST(mce_delivery, "AO delivery to a running vCPU")
{
	unsigned int i;
	int out = dup(STDOUT_FILENO), devnull = open(getenv("UNIT_DEBUG") ? "/dev/stderr" : "/dev/null", 1);

	ram = aligned_alloc(4096, 16 * MiB);	/* page-aligned, as mmap is */
	/* the kicks go to this thread; the report lines to /dev/null */
	signal(SIG_VCPU_KICK, SIG_IGN);
	fflush(stdout);
	dup2(devnull, STDOUT_FILENO);

	/* vCPU 0 runs: AOs go to it, as QEMU sends them to its first CPU */
	setup();
	ao(0x500000);
	CHECK_EQ(vm.vcpus[0].mce->queue.len, 1);
	CHECK_EQ(vm.vcpus[1].mce->queue.len, 0);

	/* vCPU 0 has finished: its queued AO moves on, the next goes to vCPU 1 */
	vm.vcpus[0].state = VCPU_DONE;
	vcpu_thread_close(&vm.vcpus[0].thread);
	mce_delivery_close_vcpu(&vm.vcpus[0]);
	CHECK_EQ(vm.vcpus[1].mce->queue.len, 1);
	ao(0x501000);
	CHECK_EQ(vm.vcpus[1].mce->queue.len, 2);
	CHECK_EQ(mce_delivery_not_delivered(&vm), 0);

	/* nobody runs: the AO is reported not delivered, and counted */
	vcpu_thread_close(&vm.vcpus[1].thread);
	mce_delivery_close_vcpu(&vm.vcpus[1]);
	CHECK_EQ(mce_delivery_not_delivered(&vm), 2);	/* the two vCPU 1 held */
	ao(0x502000);
	CHECK_EQ(mce_delivery_not_delivered(&vm), 3);
	CHECK_EQ(mce_delivery_ao_handled(&vm), 3);
	CHECK_EQ(guest_poison_count(&vm.poisoned), 3);

	/* full queues: bounded, every AO past them counted, none lost silently */
	setup();
	for (i = 0; i < 2 * MCE_QUEUE_LEN + 5; i++)
		ao(0x600000 + i * 4096ULL);
	CHECK_EQ(vm.vcpus[0].mce->queue.len, MCE_QUEUE_LEN);
	CHECK_EQ(vm.vcpus[1].mce->queue.len, MCE_QUEUE_LEN);
	CHECK_EQ(mce_delivery_not_delivered(&vm), 5);
	/*
	 * and they say why: nothing was deferred, so a burst outran delivery
	 * (it used to blame the guest's machine checks for this too) ...
	 */
	CHECK(said("outran delivery", 0x700000), "a full queue of new AOs: a burst");
	/* ... and a queue holding AOs back for a machine check in progress */
	vm.vcpus[0].mce->queue.deferred = vm.vcpus[1].mce->queue.deferred = 1;
	CHECK(said("has not finished its machine checks", 0x701000),
	      "a full queue of deferred AOs: the guest's machine check");
	/*
	 * ... or AOs waiting for a deferred-error bank the guest never reads
	 * (no poll, its interrupt masked: #24, a hostile guest): it used to
	 * blame a machine check in progress
	 */
	vm.vcpus[0].mce->queue.deferred_why = vm.vcpus[1].mce->queue.deferred_why = AO_HELD_NO_BANK;
	CHECK(said("is full (the guest has not read the deferred errors in its banks", 0x702000),
	      "a full queue of AOs waiting for a bank: the banks the guest does not read");
	CHECK_EQ(mce_delivery_not_delivered(&vm), 8);

	/*
	 * the VM stops while AOs wait for a bank: each is reported not
	 * delivered, with what it waited for, and counted
	 */
	setup();
	for (i = 0; i < 3; i++)
		ao(0x800000 + i * 4096ULL);
	vm.vcpus[0].mce->queue.entries[0].held_why = AO_HELD_NO_BANK;
	vm.vcpus[0].mce->queue.entries[1].held_why = AO_HELD_NO_BANK;
	vm.stop = 1;
	CHECK_EQ(said_by(close_vcpu0, 0, "not delivered: the VM stopped first (it waited: the guest "
			 "has not read the deferred errors in its banks"), 2);
	CHECK_EQ(mce_delivery_not_delivered(&vm), 3);

	/* the same page again is not queued twice; outside RAM is not queued */
	setup();
	ao(0x500000);
	ao(0x500000);
	{
		struct sigbus_event ev = { .code = BUS_MCEERR_AO, .addr = 4096, .lsb = 12 };

		mce_delivery_action_optional(&vm, &ev);
	}
	CHECK_EQ(vm.vcpus[0].mce->queue.len, 1);
	CHECK_EQ(mce_delivery_ao_handled(&vm), 3);

	fflush(stdout);
	dup2(out, STDOUT_FILENO);
	close(out);
	close(devnull);
	free(ram);
}
