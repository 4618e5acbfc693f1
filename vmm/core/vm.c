// SPDX-License-Identifier: GPL-2.0
/*
 * The VM's lifetime: creating it on /dev/kvm, stopping and kicking its vCPUs.
 * What the other layers add to it (MCE style, the guest kind's devices,
 * guest RAM) machine.c composes after vm_create().
 */
#include "core/vm.h"

#include <signal.h>

#include "core/kvm_dev.h"
#include "core/kvm_ioctl.h"
#include "log.h"
#include "x86/cpuid.h"

int vm_create(struct vm *vm, const struct vmm_options *opt)
{
	vm->opt = opt;
	device_bus_init(&vm->devices);
	guest_poison_init(&vm->poisoned);
	vm->boot_count = 1;
	vm->kvm_fd = kvm_dev_open();
	if (vm->kvm_fd < 0)
		return -1;
	vm->vm_fd = kvm_ioctl(vm->kvm_fd, KVM_CREATE_VM, 0);
	if (vm->vm_fd < 0)
		return -1;
	vm->run_size = kvm_ioctl(vm->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (vm->run_size < 0)
		return -1;
	if ((unsigned long)vm->run_size < sizeof(struct kvm_run)) {
		pr_err("KVM_GET_VCPU_MMAP_SIZE: %ld bytes, less than struct kvm_run", vm->run_size);
		return -1;
	}
	vm->cpuid = kvm_dev_supported_cpuid(vm->kvm_fd);
	if (!vm->cpuid)
		return -1;
	/* XSAVE only as far as the guest can really enable it (cpuid.h) */
	vm->xsetbv_exits = kvm_dev_xsetbv_exits(vm->kvm_fd, vm->cpuid);
	vm->xsave_components = cpuid_fix_xsave(vm->cpuid, vm->xsetbv_exits != 0);
	vm->vendor = cpuid_vendor(vm->cpuid);
	if (cpuid_set_hypervisor(vm->cpuid)) {
		pr_err("KVM_GET_SUPPORTED_CPUID has no leaf 1");
		return -1;
	}
	return 0;
}

void vm_kick_all(struct vm *vm)
{
	unsigned int i;

	for (i = 0; i < vm->opt->nr_vcpus; i++)
		vcpu_thread_kick(&vm->vcpus[i].thread);
}

void vm_stop(struct vm *vm, int reset)
{
	if (reset)
		vm->reset_requested = 1;
	vm->stop = 1;
	vm_kick_all(vm);
}
