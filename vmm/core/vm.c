// SPDX-License-Identifier: GPL-2.0
/* The VM's lifetime: creating it on /dev/kvm, stopping and kicking its vCPUs. */
#include "core/vm.h"

#include <signal.h>

#include "core/guest_ram.h"
#include "pc/irqchip.h"
#include "core/kvm_dev.h"
#include "core/kvm_ioctl.h"
#include "log.h"
#include "mce/mce.h"
#include "pc/pc_io.h"

/*
 * Whose machine-check encoding the guest gets. A Linux guest decodes
 * machine checks by its CPU vendor, so it gets its vendor's (as QEMU does);
 * the bare-metal guest keeps Intel's, which its tests hold to QEMU's
 * values. An AMD encoding also needs SUCCOR in CPUID, or Linux panics on
 * every uncorrected error (mce_severity_amd()).
 */
static int choose_mce_style(struct vm *vm)
{
	const struct vmm_options *opt = vm->opt;
	enum cpu_vendor enc;

	vm->vendor = cpuid_vendor(vm->cpuid);
	if (opt->mce_vendor >= 0)
		enc = opt->mce_vendor;
	else
		enc = vm->kind == GUEST_KIND_LINUX ? vm->vendor : CPU_VENDOR_INTEL;
	vm->mce_style = (opt->mce_page_lsb ? MCE_STYLE_PAGE_LSB : 0) |
			(enc == CPU_VENDOR_AMD ? MCE_STYLE_AMD : 0);
	/*
	 * Intel's #MC goes to every CPU on the models QEMU broadcasts on, and
	 * a Linux guest's handler waits for all of them (mce_start()); AMD's
	 * is local, as QEMU's AMD support keeps it.
	 */
	if (enc != CPU_VENDOR_AMD && cpuid_mca_broadcast(vm->cpuid))
		vm->mce_style |= MCE_STYLE_BROADCAST;
	if ((vm->mce_style & MCE_STYLE_AMD) && cpuid_set_mca_recovery(vm->cpuid)) {
		pr_err("KVM_GET_SUPPORTED_CPUID has no leaf 0x80000007: cannot give the guest "
		       "SUCCOR, without which AMD machine checks are fatal to it");
		return -1;
	}
	return 0;
}

int vm_create(struct vm *vm, const struct vmm_options *opt)
{
	vm->opt = opt;
	vm->kind = opt->kernel_path ? GUEST_KIND_LINUX : GUEST_KIND_HWLAB;
	pthread_mutex_init(&vm->io_lock, NULL);
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
	/* XSAVE only as far as the guest can really enable it (cpuid.h) */
	vm->xsetbv_exits = kvm_dev_xsetbv_exits(vm->kvm_fd, vm->cpuid);
	vm->xsave_components = cpuid_fix_xsave(vm->cpuid, vm->xsetbv_exits != 0);
	if (choose_mce_style(vm))
		return -1;
	/* the interrupt hardware must exist before the first vCPU */
	if (vm->kind == GUEST_KIND_LINUX && irqchip_create(vm))
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
