// SPDX-License-Identifier: GPL-2.0
#include "pc/irqchip.h"

#include <string.h>
#include <linux/kvm.h>

#include "core/kvm_ioctl.h"
#include "log.h"
#include "core/vm.h"

/* Three pages below 4 GiB that KVM's VMX code needs for real mode; unused on SVM. */
#define TSS_ADDR		0xfffbd000ULL

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
	return 0;
}

void irqchip_set_line(struct vm *vm, unsigned int gsi, int level)
{
	struct kvm_irq_level irq = { .irq = gsi, .level = level };

	/* a failure here is a VMM bug, not the guest's: say it, go on */
	kvm_ioctl(vm->vm_fd, KVM_IRQ_LINE, &irq);
}

int irqchip_save_vcpu(struct vcpu *v)
{
	return vcpu_ioctl(v, KVM_GET_LAPIC, &v->lapic_at_power_on) < 0 ? -1 : 0;
}

int irqchip_restore_vcpu(struct vcpu *v)
{
	return vcpu_ioctl(v, KVM_SET_LAPIC, &v->lapic_at_power_on) < 0 ? -1 : 0;
}

int irqchip_save_vm(struct vm *vm)
{
	unsigned int i;

	for (i = 0; i < IRQCHIP_NR_CHIPS; i++) {
		vm->chips_at_power_on[i].chip_id = i;
		if (kvm_ioctl(vm->vm_fd, KVM_GET_IRQCHIP, &vm->chips_at_power_on[i]) < 0)
			return -1;
	}
	return kvm_ioctl(vm->vm_fd, KVM_GET_PIT2, &vm->pit_at_power_on) < 0 ? -1 : 0;
}

int irqchip_restore_vm(struct vm *vm)
{
	unsigned int i;

	for (i = 0; i < IRQCHIP_NR_CHIPS; i++)
		if (kvm_ioctl(vm->vm_fd, KVM_SET_IRQCHIP, &vm->chips_at_power_on[i]) < 0)
			return -1;
	return kvm_ioctl(vm->vm_fd, KVM_SET_PIT2, &vm->pit_at_power_on) < 0 ? -1 : 0;
}
