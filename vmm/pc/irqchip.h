/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The PC interrupt hardware a Linux guest expects, all inside KVM: the two
 * 8259 PICs and the I/O APIC (KVM_CREATE_IRQCHIP), a local APIC per vCPU,
 * and the 8254 PIT (KVM_CREATE_PIT2). Their power-on state is kept so that a
 * guest reset can put them back (a reboot must not inherit masked lines or
 * a running timer).
 */
#ifndef HWLAB_IRQCHIP_H
#define HWLAB_IRQCHIP_H

struct vm;
struct vcpu;

/*
 * Before any vCPU exists; puts the chips on the device bus (reset: the
 * power-on state; save/restore: KVM_GET/SET_IRQCHIP and _PIT2). 0, or -1
 * after a message naming the ioctl.
 */
int irqchip_create(struct vm *vm);
/* Drive a GSI (an ISA IRQ number) to level 0 or 1. */
void irqchip_set_line(struct vm *vm, unsigned int gsi, int level);
/* After vCPU creation: keep its local APIC's power-on state. */
int irqchip_save_vcpu(struct vcpu *v);
/* Keep the PICs', the I/O APIC's and the PIT's power-on state. */
int irqchip_save_vm(struct vm *vm);
/* Reset: the power-on state again, before the vCPUs are. */
int irqchip_restore_vm(struct vm *vm);
int irqchip_restore_vcpu(struct vcpu *v);

#endif
