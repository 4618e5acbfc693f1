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

#include "cpuid.h"
#include "irqchip.h"
#include "kvm_ioctl.h"
#include "log.h"
#include "mce.h"
#include "pc_io.h"
#include "report.h"
#include "ucall.h"
#include "vm.h"
#include "x86_boot.h"

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
	mce_delivery_init_vcpu(v);
	ucall_init_vcpu(v);
	v->fd = kvm_ioctl(vm->vm_fd, KVM_CREATE_VCPU, id);
	if (v->fd < 0)
		return -1;
	v->run = mmap(NULL, vm->run_size, PROT_READ | PROT_WRITE, MAP_SHARED, v->fd, 0);
	if (v->run == MAP_FAILED) {
		pr_errno("mmap of vCPU %u's kvm_run", id);
		return -1;
	}
	v->sig.run = v->run;
	/* CPUID first: KVM refuses EFER.LME for a vCPU without long mode. */
	if (set_cpuid(v) || mce_setup_vcpu(vm->kvm_fd, v))
		return -1;
	/* before the first reset: what the local APIC looks like at power-on */
	if (vm->kind == GUEST_KIND_LINUX && irqchip_save_vcpu(v))
		return -1;
	return vcpu_reset(v);
}

int vcpu_reset(struct vcpu *v)
{
	if (v->vm->kind == GUEST_KIND_LINUX && irqchip_restore_vcpu(v))
		return -1;
	if (x86_boot_reset_vcpu(v) || mce_reset_vcpu(v))
		return -1;
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

/* The exits of a Linux guest: its devices, reboot, and what must not happen. */
static int handle_linux_exit(struct vcpu *v)
{
	struct kvm_run *run = v->run;

	switch (run->exit_reason) {
	case KVM_EXIT_IO:
		if (pc_io_port(v))
			return guest_reboot(v, "keyboard controller reset");
		return 0;
	case KVM_EXIT_MMIO:
		pc_io_mmio(v);
		return 0;
	case KVM_EXIT_SHUTDOWN:
		return guest_reboot(v, "triple fault");
	}
	return -2;	/* the exits both kinds share */
}

/* Returns 0 to run on, 1 when the guest finished on this vCPU, -1 on failure. */
static int handle_exit(struct vcpu *v)
{
	struct kvm_run *run = v->run;

	if (v->vm->kind == GUEST_KIND_LINUX) {
		int r = handle_linux_exit(v);

		if (r != -2)
			return r;
	}
	switch (run->exit_reason) {
	case KVM_EXIT_IO:
		if (run->io.port == UCALL_PORT && run->io.direction == KVM_EXIT_IO_OUT &&
		    run->io.size == 4 && run->io.count == 1)
			return ucall_handle(v);
		return guest_fail(v, "unexpected port I/O %#x", run->io.port);
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

	sigbus_bind_thread(&v->sig);
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
		v->sig.in_kvm_run = 1;
		r = ioctl(v->fd, KVM_RUN, 0);
		v->sig.in_kvm_run = 0;
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
	mce_delivery_close_vcpu(v);
	return NULL;
}
