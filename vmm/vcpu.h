/* SPDX-License-Identifier: GPL-2.0 */
/* A vCPU: its creation, its reset and its KVM_RUN loop (one thread each). */
#ifndef HWLAB_VCPU_H
#define HWLAB_VCPU_H

struct vm;
struct vcpu;

/* KVM_CREATE_VCPU, kvm_run, CPUID, MCE banks, boot registers. */
int vcpu_create(struct vm *vm, unsigned int id);
/* Back to the guest's entry with nothing pending (first boot and every reset). */
int vcpu_reset(struct vcpu *v);
/*
 * What vcpu_reset sets besides the entry registers, as a vCPU has it at
 * power-on: no event injected or pending and NMIs unblocked, debug
 * registers, XCR0, x87/SSE/XSAVE state, the MSRs a guest sets (PAT,
 * SYSCALL/SYSENTER, kvmclock and the other KVM PV MSRs). Needs only v->fd,
 * v->id and v->vm->kvm_fd. Returns 0, or -1 after a message naming the ioctl.
 */
int vcpu_power_on_state(struct vcpu *v);
/* pthread body: run until the guest finishes, fails or the VM stops. */
void *vcpu_thread(void *arg);

#endif
