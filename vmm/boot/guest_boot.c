// SPDX-License-Identifier: GPL-2.0
#include "boot/guest_boot.h"

#include <linux/kvm.h>

#include "boot/linux_boot.h"
#include "boot/x86_boot.h"
#include "core/device.h"
#include "core/kvm_ioctl.h"
#include "core/vm.h"
#include "hwlab/ucall.h"
#include "pc/cmos_rtc.h"
#include "pc/console.h"
#include "pc/debug_ports.h"
#include "pc/i8042.h"
#include "pc/irqchip.h"
#include "pc/pci_conf1.h"

/* One guest per process. */
static struct guest_state guest_state;

/* The bare-metal guest: every vCPU runs from the entry; ucalls on UCALL_PORT. */
static int hwlab_reset_vcpu(struct vcpu *v)
{
	struct kvm_mp_state mp = { .mp_state = KVM_MP_STATE_RUNNABLE };

	if (vcpu_ioctl(v, KVM_SET_MP_STATE, &mp) < 0)
		return -1;
	return x86_boot_reset_elf_vcpu(v);
}

static int hwlab_handle_exit(struct vcpu *v, const char **why)
{
	struct kvm_run *run = v->run;

	(void)why;
	if (run->exit_reason == KVM_EXIT_IO && run->io.port == UCALL_PORT &&
	    run->io.direction == KVM_EXIT_IO_OUT && run->io.size == 4 && run->io.count == 1)
		return ucall_handle(v);
	return GUEST_EXIT_COMMON;
}

/* A Linux guest: a console, a PC's interrupt hardware and the little else it probes. */
static int linux_open(struct vm *vm, const struct vmm_options *opt)
{
	if (opt->initrd_path && guest_image_read(&vm->guest->initrd, opt->initrd_path))
		return -1;
	return console_open(vm, opt->console_path, opt->console_in, opt->console_stamp);
}

/*
 * In the order KVM needs (the interrupt hardware before the first vCPU)
 * and their reset hooks run: the chips first.
 */
static int linux_create(struct vm *vm)
{
	return irqchip_create(vm) || debug_ports_register(vm) || i8042_register(vm) ||
	       cmos_rtc_register(vm) || pci_conf1_register(vm) || console_register(vm) ? -1 : 0;
}

/* the PICs', I/O APIC's and PIT's power-on state, for a reboot; then the console's input */
static int linux_ready(struct vm *vm)
{
	return irqchip_save_vm(vm) || console_start_input(vm) ? -1 : 0;
}

static int linux_reset_vcpu(struct vcpu *v)
{
	return irqchip_restore_vcpu(v) || linux_boot_reset_vcpu(v) ? -1 : 0;
}

/* Its devices, and its two ways to reboot (no ACPI). */
static int linux_handle_exit(struct vcpu *v, const char **why)
{
	switch (v->run->exit_reason) {
	case KVM_EXIT_IO:
		if (device_port_exit(v)) {
			*why = "keyboard controller reset";
			return GUEST_EXIT_REBOOT;
		}
		return 0;
	case KVM_EXIT_MMIO:
		if (device_mmio_exit(v)) {
			*why = "device reset";
			return GUEST_EXIT_REBOOT;
		}
		return 0;
	case KVM_EXIT_SHUTDOWN:
		*why = "triple fault";	/* its last resort */
		return GUEST_EXIT_REBOOT;
	}
	return GUEST_EXIT_COMMON;
}

static void linux_finish(struct vm *vm)
{
	console_flush();
	device_report_exits(&vm->devices.seen);
}

static const struct guest_kind hwlab_kind = {
	.name = "hwlab",
	/* Intel's encoding, which the bare-metal guest's tests hold to QEMU's values */
	.mce_as_vcpu_vendor = 0,
	/* with --mce-lsb page it retires each page as it touches it, one AR each, which its test counts */
	.mce_spread = 0,
	.load = x86_boot_load_elf_guest,
	.reset_vcpu = hwlab_reset_vcpu,
	.boot_areas = x86_boot_elf_areas,
	.handle_exit = hwlab_handle_exit,
};

static const struct guest_kind linux_kind = {
	.name = "linux",
	.mce_as_vcpu_vendor = 1,
	.mce_spread = 1,
	.open = linux_open,
	.create = linux_create,
	.load = linux_boot_load,
	.create_vcpu = irqchip_save_vcpu,
	.ready = linux_ready,
	.reset_vcpu = linux_reset_vcpu,
	.boot_areas = linux_boot_areas,
	.handle_exit = linux_handle_exit,
	.finish = linux_finish,
};

int guest_kind_open(struct vm *vm, const struct vmm_options *opt)
{
	const struct guest_kind *k = opt->kernel_path ? &linux_kind : &hwlab_kind;

	vm->kind = k;
	vm->guest = &guest_state;
	vm->mce_as_vcpu_vendor = k->mce_as_vcpu_vendor;
	vm->mce_spread = k->mce_spread;
	if (guest_image_read(&vm->guest->image, opt->kernel_path ? opt->kernel_path : opt->image_path))
		return -1;
	return k->open ? k->open(vm, opt) : 0;
}

int guest_kind_create(struct vm *vm)
{
	return vm->kind->create ? vm->kind->create(vm) : 0;
}

int guest_kind_create_vcpu(struct vcpu *v)
{
	return v->vm->kind->create_vcpu ? v->vm->kind->create_vcpu(v) : 0;
}

int guest_kind_ready(struct vm *vm)
{
	return vm->kind->ready ? vm->kind->ready(vm) : 0;
}

void guest_kind_finish(struct vm *vm)
{
	if (vm->kind->finish)
		vm->kind->finish(vm);
}

int guest_kind_handle_exit(struct vcpu *v, const char **why)
{
	return v->vm->kind->handle_exit(v, why);
}

int guest_boot_load(struct vm *vm)
{
	return vm->kind->load(vm);
}

int guest_boot_reset_vcpu(struct vcpu *v)
{
	return v->vm->kind->reset_vcpu(v);
}

unsigned int guest_boot_areas(const struct vm *vm, uint64_t *gpa, uint64_t *len, unsigned int max)
{
	return vm->kind->boot_areas(vm, gpa, len, max);
}
