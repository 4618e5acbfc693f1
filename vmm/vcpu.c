// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include "vcpu.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "x86/cpuid.h"
#include "boot/guest_boot.h"
#include "core/kvm_ioctl.h"
#include "log.h"
#include "mce/mce.h"
#include "mce/mce_delivery.h"
#include "mce/smca_kvm.h"
#include "core/report.h"
#include "mce/sigbus.h"
#include "hwlab/ucall.h"
#include "core/vm.h"

/* The VM's CPUID with this vCPU's APIC id (the MP table's name for it). */
static int set_cpuid(struct vcpu *v)
{
	struct kvm_cpuid2 *c = cpuid_for_vcpu(v->vm->cpuid, v->id);
	int r;

	if (!c) {
		pr_err("out of memory for vCPU %u's CPUID", v->id);
		return -1;
	}
	r = vcpu_ioctl(v, KVM_SET_CPUID2, c) < 0 ? -1 : 0;
	free(c);
	return r;
}

int vcpu_create(struct vm *vm, unsigned int id)
{
	struct vcpu *v = &vm->vcpus[id];

	v->vm = vm;
	v->id = id;
	vcpu_thread_init(&v->thread);
	if (mce_delivery_init_vcpu(v))
		return -1;
	ucall_init_vcpu(v);
	v->fd = kvm_ioctl(vm->vm_fd, KVM_CREATE_VCPU, id);
	if (v->fd < 0)
		return -1;
	v->run = mmap(NULL, vm->run_size, PROT_READ | PROT_WRITE, MAP_SHARED, v->fd, 0);
	if (v->run == MAP_FAILED) {
		pr_errno("mmap of vCPU %u's kvm_run", id);
		return -1;
	}
	v->sig = sigbus_thread_new(v->run);
	if (!v->sig)
		return -1;
	/* CPUID first: KVM refuses EFER.LME for a vCPU without long mode. */
	if (set_cpuid(v) || mce_setup_vcpu(v))
		return -1;
	/* before the first reset: e.g. what the local APIC looks like at power-on */
	if (guest_kind_create_vcpu(v))
		return -1;
	return vcpu_reset(v);
}

/*
 * MSRs a guest changes that outlive a reset unless the VMM puts them back,
 * with their power-on values (SDM vol. 3 table 10-1; KVM's for its own).
 * A rebooted Linux guest must not find its old kvmclock, steal-time or
 * async-PF areas still written by KVM into memory that is now someone
 * else's. Not the kvmclock wall-clock MSRs: a write makes KVM store the
 * time at the GPA written, and they hold no state after it.
 */
#define MSR_IA32_SYSENTER_CS	0x174
#define MSR_IA32_SYSENTER_ESP	0x175
#define MSR_IA32_SYSENTER_EIP	0x176
#define MSR_IA32_DEBUGCTL	0x1d9
#define MSR_IA32_CR_PAT		0x277
#define MSR_IA32_SPEC_CTRL	0x48
#define MSR_IA32_XSS		0xda0
#define MSR_STAR		0xc0000081
#define MSR_LSTAR		0xc0000082
#define MSR_CSTAR		0xc0000083
#define MSR_SYSCALL_MASK	0xc0000084
#define MSR_KERNEL_GS_BASE	0xc0000102
#define MSR_TSC_AUX		0xc0000103
#define MSR_KVM_SYSTEM_TIME	0x12
#define MSR_KVM_SYSTEM_TIME_NEW	0x4b564d01
#define MSR_KVM_ASYNC_PF_EN	0x4b564d02
#define MSR_KVM_STEAL_TIME	0x4b564d03
#define MSR_KVM_PV_EOI_EN	0x4b564d04
#define MSR_KVM_POLL_CONTROL	0x4b564d05

static const struct {
	uint32_t index;
	uint64_t value;
} power_on_msrs[] = {
	{ MSR_IA32_SYSENTER_CS, 0 }, { MSR_IA32_SYSENTER_ESP, 0 }, { MSR_IA32_SYSENTER_EIP, 0 },
	{ MSR_IA32_DEBUGCTL, 0 }, { MSR_IA32_CR_PAT, 0x0007040600070406ULL },
	{ MSR_IA32_SPEC_CTRL, 0 }, { MSR_IA32_XSS, 0 },
	{ MSR_STAR, 0 }, { MSR_LSTAR, 0 }, { MSR_CSTAR, 0 }, { MSR_SYSCALL_MASK, 0 },
	{ MSR_KERNEL_GS_BASE, 0 }, { MSR_TSC_AUX, 0 },
	{ MSR_KVM_SYSTEM_TIME, 0 }, { MSR_KVM_SYSTEM_TIME_NEW, 0 }, { MSR_KVM_ASYNC_PF_EN, 0 },
	{ MSR_KVM_STEAL_TIME, 0 }, { MSR_KVM_PV_EOI_EN, 0 }, { MSR_KVM_POLL_CONTROL, 1 },
};
#define NR_POWER_ON_MSRS (sizeof(power_on_msrs) / sizeof(power_on_msrs[0]))

/* The entries of power_on_msrs this KVM knows (KVM_GET_MSR_INDEX_LIST). */
static unsigned int known_msrs(int kvm_fd, struct kvm_msr_entry *out)
{
	struct kvm_msr_list probe = { .nmsrs = 0 };
	struct kvm_msr_list *list;
	unsigned int i, j, n = 0;

	/* E2BIG, with the count: the list's length */
	if (ioctl(kvm_fd, KVM_GET_MSR_INDEX_LIST, &probe) < 0 && errno != E2BIG) {
		pr_errno("KVM_GET_MSR_INDEX_LIST");
		return 0;
	}
	list = calloc(1, sizeof(*list) + probe.nmsrs * sizeof(list->indices[0]));
	if (!list)
		return 0;
	list->nmsrs = probe.nmsrs;
	if (kvm_ioctl(kvm_fd, KVM_GET_MSR_INDEX_LIST, list) < 0) {
		free(list);
		return 0;
	}
	for (i = 0; i < NR_POWER_ON_MSRS; i++)
		for (j = 0; j < list->nmsrs; j++)
			if (list->indices[j] == power_on_msrs[i].index) {
				out[n++] = (struct kvm_msr_entry) { .index = power_on_msrs[i].index };
				break;
			}
	free(list);
	return n;
}

/*
 * The MSRs of power_on_msrs that differ from their power-on value, written
 * back; only those, so that one KVM refuses to set (steal time without
 * sched_info) is touched only when the guest could set it too.
 */
static int reset_msrs(struct vcpu *v)
{
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry e[NR_POWER_ON_MSRS];
	} msrs = { .hdr.nmsrs = 0 };
	unsigned int i, j, n, changed = 0;

	n = known_msrs(v->vm->kvm_fd, msrs.e);
	msrs.hdr.nmsrs = n;
	if (n && vcpu_get_msrs(v->fd, v->id, &msrs.hdr))
		return -1;
	for (i = 0; i < n; i++)
		for (j = 0; j < NR_POWER_ON_MSRS; j++)
			if (power_on_msrs[j].index == msrs.e[i].index &&
			    power_on_msrs[j].value != msrs.e[i].data)
				msrs.e[changed++] = (struct kvm_msr_entry) {
					.index = msrs.e[i].index, .data = power_on_msrs[j].value,
				};
	msrs.hdr.nmsrs = changed;
	return changed ? vcpu_set_msrs(v->fd, v->id, &msrs.hdr) : 0;
}

/* x87 and SSE as FNINIT and power-on leave them, every other XSAVE component in its init state. */
static int reset_fpu(struct vcpu *v)
{
	if (kvm_ioctl(v->vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_XSAVE) > 0) {
		struct kvm_xsave xs;
		uint16_t fcw = 0x37f;
		uint32_t mxcsr = 0x1f80;
		/*
		 * XSTATE_BV (at 512): x87 and SSE given here (KVM copies only
		 * what it names into the vCPU, and XRSTOR loads MXCSR whatever
		 * it says), every other component in its init state
		 */
		uint64_t xstate_bv = 0x3;

		memset(&xs, 0, sizeof(xs));
		memcpy((uint8_t *)xs.region, &fcw, sizeof(fcw));
		memcpy((uint8_t *)xs.region + 24, &mxcsr, sizeof(mxcsr));
		memcpy((uint8_t *)xs.region + 512, &xstate_bv, sizeof(xstate_bv));
		return vcpu_ioctl(v, KVM_SET_XSAVE, &xs) < 0 ? -1 : 0;
	} else {
		struct kvm_fpu fpu = { .fcw = 0x37f, .mxcsr = 0x1f80 };

		return vcpu_ioctl(v, KVM_SET_FPU, &fpu) < 0 ? -1 : 0;
	}
}

int vcpu_power_on_state(struct vcpu *v)
{
	/*
	 * Nothing injected or pending, NMIs not blocked (a guest reset inside
	 * its NMI handler booted again with NMIs blocked, which a guest that
	 * relies on one IRET to unblock them turned into a triple fault at
	 * every boot), no interrupt shadow, no SMI, no latched INIT. The flags
	 * make KVM take the NMI pending, SIPI vector, shadow and SMM fields too.
	 */
	struct kvm_vcpu_events events = {
		.flags = KVM_VCPUEVENT_VALID_NMI_PENDING | KVM_VCPUEVENT_VALID_SIPI_VECTOR |
			 KVM_VCPUEVENT_VALID_SHADOW | KVM_VCPUEVENT_VALID_SMM,
	};
	/* DR6 and DR7 as at power-on: no breakpoint armed */
	struct kvm_debugregs dbg = { .dr6 = 0xffff0ff0, .dr7 = 0x400 };
	struct kvm_xcrs xcrs = { .nr_xcrs = 1, .xcrs[0] = { .xcr = 0, .value = 1 } };

	if (vcpu_ioctl(v, KVM_SET_VCPU_EVENTS, &events) < 0 ||
	    vcpu_ioctl(v, KVM_SET_DEBUGREGS, &dbg) < 0)
		return -1;
	/* XCR0: x87 only, as at power-on */
	if (kvm_ioctl(v->vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_XCRS) > 0 &&
	    vcpu_ioctl(v, KVM_SET_XCRS, &xcrs) < 0)
		return -1;
	return reset_fpu(v) || reset_msrs(v) ? -1 : 0;
}

int vcpu_reset(struct vcpu *v)
{
	/*
	 * The kind's entry, run state (a Linux guest's APs wait for SIPI) and
	 * local APIC; events after the registers: KVM_SET_SREGS may queue an
	 * interrupt.
	 */
	if (guest_boot_reset_vcpu(v) || mce_reset_vcpu(v) || vcpu_power_on_state(v))
		return -1;
	vcpu_thread_reset(&v->thread);
	mce_delivery_reset_vcpu(v);
	v->state = VCPU_RUNNING;
	return 0;
}

static int guest_fail(const struct vcpu *v, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A guest_fail report line for an exit the guest should not have made. */
static int guest_fail(const struct vcpu *v, const char *fmt, ...)
{
	char reason[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	report("guest_fail", "\"vcpu\":%u,\"reason\":\"%s\"", v->id, reason);
	return -1;
}

/*
 * A Linux guest reboots (keyboard controller reset, or a triple fault, its
 * last resort): a reset, up to max_resets (3) times.
 */
static int guest_reboot(struct vcpu *v, const char *why)
{
	struct vm *vm = v->vm;

	if (vm->boot_count > vm->opt->max_resets)
		return guest_fail(v, "%s: reboot %u, more than the %u allowed", why,
				  vm->boot_count, vm->opt->max_resets);
	report("guest_reboot", "\"vcpu\":%u,\"reason\":\"%s\",\"boot\":%u", v->id, why,
	       vm->boot_count);
	v->state = VCPU_STOPPED;
	vm_stop(vm, 1);
	return 0;
}

/* Returns 0 to run on, 1 when the guest finished on this vCPU, -1 on failure. */
static int handle_exit(struct vcpu *v)
{
	struct kvm_run *run = v->run;
	const char *why = "";
	int r = guest_kind_handle_exit(v, &why);

	if (r == GUEST_EXIT_REBOOT)
		return guest_reboot(v, why);
	if (r != GUEST_EXIT_COMMON)
		return r;
	/* what the kind did not take: the same for every kind */
	switch (run->exit_reason) {
	case KVM_EXIT_IO:
		return guest_fail(v, "unexpected port I/O %#x", run->io.port);
	case KVM_EXIT_X86_RDMSR:
	case KVM_EXIT_X86_WRMSR:
		/* only with --smca: the SMCA banks, MSR_CU_DEF_ERR, the extended LVT */
		return smca_msr_exit(v);
	case KVM_EXIT_HLT:
		return guest_fail(v, "guest halted without reporting");
	case KVM_EXIT_SHUTDOWN:
		return guest_fail(v, "guest shut down (triple fault)");
	case KVM_EXIT_FAIL_ENTRY:
		return guest_fail(v, "VM entry failed, hw reason %#llx",
				  (unsigned long long)run->fail_entry.hardware_entry_failure_reason);
	case KVM_EXIT_INTERNAL_ERROR:
		return guest_fail(v, "KVM internal error %u", run->internal.suberror);
	}
	return guest_fail(v, "unexpected exit reason %u", run->exit_reason);
}

void *vcpu_thread(void *arg)
{
	struct vcpu *v = arg;
	struct vm *vm = v->vm;
	sigset_t unblock;

	sigbus_bind_thread(v->sig);
	__atomic_store_n(&v->tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
	sigemptyset(&unblock);
	sigaddset(&unblock, SIGBUS);
	sigaddset(&unblock, SIG_VCPU_KICK);
	pthread_sigmask(SIG_UNBLOCK, &unblock, NULL);

	while (v->state == VCPU_RUNNING) {
		int r;

		if (mce_delivery_run_pending(v))
			break;
		if (vm->stop) {
			v->state = VCPU_STOPPED;
			break;
		}
		if (vm->pause) {
			/*
			 * KVM completes an I/O, MMIO or MSR exit only at the
			 * next KVM_RUN (RIP is not yet past an OUT): enter once
			 * with immediate_exit so that the saved state is whole,
			 * as the API asks before a migration (QEMU does the same).
			 */
			v->run->immediate_exit = 1;
			/* a string I/O may take more than one trip: until KVM says EINTR */
			for (;;) {
				int r;

				v->sig->in_kvm_run = 1;
				r = ioctl(v->fd, KVM_RUN, 0);
				v->sig->in_kvm_run = 0;
				if (r != 0 || v->state != VCPU_RUNNING)
					break;
				if (handle_exit(v) < 0)
					v->state = VCPU_FAILED;
			}
			v->run->immediate_exit = 0;
			if (v->state != VCPU_RUNNING)
				break;
			/* a snapshot or a migration reads the vCPU's state meanwhile */
			vm_pause_point(v);
			continue;
		}
		v->sig->in_kvm_run = 1;
		r = ioctl(v->fd, KVM_RUN, 0);
		v->sig->in_kvm_run = 0;
		if (r < 0) {
			/* a signal (SIGBUS, or a kick) interrupted the guest: look why */
			if (errno == EINTR || errno == EAGAIN) {
				v->run->immediate_exit = 0;
				continue;
			}
			report("guest_fail", "\"vcpu\":%u,\"reason\":\"KVM_RUN: %s\"", v->id,
			       strerror(errno));
			v->state = VCPU_FAILED;
			break;
		}
		if (handle_exit(v) < 0)
			v->state = VCPU_FAILED;
	}
	ucall_report_suppressed(v);	/* what the limit held back to the end */
	if (v->state == VCPU_FAILED && !vm->stop)
		vm_stop(vm, 0);
	vcpu_thread_close(&v->thread);
	mce_delivery_close_vcpu(v);
	return NULL;
}
