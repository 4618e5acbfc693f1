// SPDX-License-Identifier: GPL-2.0
#include "pc/irqchip.h"

#include <string.h>
#include <linux/kvm.h>

#include "core/device.h"
#include "core/kvm_ioctl.h"
#include "hwlab_abi.h"
#include "log.h"
#include "core/vm.h"

/* Three pages below 4 GiB that KVM's VMX code needs for real mode; unused on SVM. */
#define TSS_ADDR		0xfffbd000ULL
/* KVM_GET_IRQCHIP's chips: PIC master, PIC slave, I/O APIC */
#define IRQCHIP_NR_CHIPS	3

/* One VM per process: its chips' power-on state, kept for a reboot. */
static struct {
	int vm_fd;
	struct kvm_irqchip chips[IRQCHIP_NR_CHIPS];
	struct kvm_pit_state2 pit;
	struct kvm_lapic_state lapic[GUEST_MAX_VCPUS];
} power_on;

/* A reboot: the chips as at power-on (the vCPUs' local APICs: irqchip_restore_vcpu). */
static int irqchip_reset(struct vm *vm, void *opaque)
{
	(void)opaque;
	return irqchip_restore_vm(vm);
}

/* The chips' state now: three chips, then the PIT (the local APICs go with their vCPUs). */
static int irqchip_save(void *opaque, struct device_stream *out)
{
	struct kvm_pit_state2 pit;
	unsigned int i;

	(void)opaque;
	for (i = 0; i < IRQCHIP_NR_CHIPS; i++) {
		struct kvm_irqchip chip = { .chip_id = i };

		if (kvm_ioctl(power_on.vm_fd, KVM_GET_IRQCHIP, &chip) < 0)
			return -1;
		device_stream_put(out, &chip, sizeof(chip));
	}
	if (kvm_ioctl(power_on.vm_fd, KVM_GET_PIT2, &pit) < 0)
		return -1;
	device_stream_put(out, &pit, sizeof(pit));
	return 0;
}

static int irqchip_load(void *opaque, struct device_stream *in)
{
	struct kvm_irqchip chips[IRQCHIP_NR_CHIPS];
	struct kvm_pit_state2 pit;
	unsigned int i;

	(void)opaque;
	device_stream_get(in, chips, sizeof(chips));
	device_stream_get(in, &pit, sizeof(pit));
	if (in->failed)
		return -1;
	for (i = 0; i < IRQCHIP_NR_CHIPS; i++)
		if (kvm_ioctl(power_on.vm_fd, KVM_SET_IRQCHIP, &chips[i]) < 0)
			return -1;
	return kvm_ioctl(power_on.vm_fd, KVM_SET_PIT2, &pit) < 0 ? -1 : 0;
}

/* In KVM: no ports of ours (the PIT's and PICs' exits never reach us), only hooks. */
static const struct device irqchip_device = {
	.name = "irqchip", .reset = irqchip_reset, .save = irqchip_save, .restore = irqchip_load,
};

int irqchip_create(struct vm *vm)
{
	/* the speaker port 0x61 too: its bit 5 is how Linux calibrates the TSC on the PIT */
	struct kvm_pit_config pit = { .flags = KVM_PIT_SPEAKER_DUMMY };

	/* VMX needs it before the first vCPU; SVM ignores it */
	if (kvm_ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_SET_TSS_ADDR) > 0 &&
	    kvm_ioctl(vm->vm_fd, KVM_SET_TSS_ADDR, TSS_ADDR) < 0)
		return -1;
	if (kvm_ioctl(vm->vm_fd, KVM_CREATE_IRQCHIP, 0) < 0 ||
	    kvm_ioctl(vm->vm_fd, KVM_CREATE_PIT2, &pit) < 0)
		return -1;
	power_on.vm_fd = vm->vm_fd;
	return device_add(&vm->devices, &irqchip_device);
}

void irqchip_set_line(struct vm *vm, unsigned int gsi, int level)
{
	struct kvm_irq_level irq = { .irq = gsi, .level = level };

	/* a failure here is a VMM bug, not the guest's: say it, go on */
	kvm_ioctl(vm->vm_fd, KVM_IRQ_LINE, &irq);
}

int irqchip_save_vcpu(struct vcpu *v)
{
	return vcpu_ioctl(v, KVM_GET_LAPIC, &power_on.lapic[v->id]) < 0 ? -1 : 0;
}

int irqchip_restore_vcpu(struct vcpu *v)
{
	return vcpu_ioctl(v, KVM_SET_LAPIC, &power_on.lapic[v->id]) < 0 ? -1 : 0;
}

int irqchip_save_vm(struct vm *vm)
{
	unsigned int i;

	for (i = 0; i < IRQCHIP_NR_CHIPS; i++) {
		power_on.chips[i].chip_id = i;
		if (kvm_ioctl(vm->vm_fd, KVM_GET_IRQCHIP, &power_on.chips[i]) < 0)
			return -1;
	}
	return kvm_ioctl(vm->vm_fd, KVM_GET_PIT2, &power_on.pit) < 0 ? -1 : 0;
}

int irqchip_restore_vm(struct vm *vm)
{
	unsigned int i;

	for (i = 0; i < IRQCHIP_NR_CHIPS; i++)
		if (kvm_ioctl(vm->vm_fd, KVM_SET_IRQCHIP, &power_on.chips[i]) < 0)
			return -1;
	return kvm_ioctl(vm->vm_fd, KVM_SET_PIT2, &power_on.pit) < 0 ? -1 : 0;
}
