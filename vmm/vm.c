// SPDX-License-Identifier: GPL-2.0
/* The VM's lifetime: creating it on /dev/kvm, stopping and kicking its vCPUs. */
#include "vm.h"

#include <signal.h>

#include "guest_ram.h"
#include "kvm_dev.h"
#include "kvm_ioctl.h"
#include "log.h"

int vm_create(struct vm *vm, const struct vmm_options *opt)
{
	vm->opt = opt;
	vm->boot_count = 1;
	mce_delivery_init_vm(vm);
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
	return guest_ram_create(vm);
}

void vm_kick_all(struct vm *vm)
{
	unsigned int i;

	for (i = 0; i < vm->opt->nr_vcpus; i++)
		mce_delivery_kick(&vm->vcpus[i], 0);
}

void vm_stop(struct vm *vm, int reset)
{
	if (reset)
		vm->reset_requested = 1;
	vm->stop = 1;
	vm_kick_all(vm);
}
