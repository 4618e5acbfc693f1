/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One vCPU's whole state as KVM holds it, and the VMM's own part of it (the
 * SMCA view's registers), into and out of a byte stream: what a snapshot or
 * a migration carries for each vCPU. Saved while the vCPU is paused (out of
 * KVM_RUN, core/vm.h's vm_pause()); restored before it first runs.
 */
#ifndef HWLAB_MIGRATE_VCPU_STATE_H
#define HWLAB_MIGRATE_VCPU_STATE_H

struct vcpu;
struct device_stream;

/*
 * Pieces, each a u32 tag, a u32 length and its bytes, in the order a
 * restore sets them (QEMU's kvm_arch_put_registers() order): general and
 * special registers, XSAVE (or the FPU) and XCRs, the MSRs KVM lists and
 * the MCE banks', MP state, local APIC, vCPU events, debug registers, the
 * SMCA view. 0, or -1 after a message naming the ioctl or the piece.
 */
int vcpu_state_save(struct vcpu *v, struct device_stream *out);
int vcpu_state_restore(struct vcpu *v, struct device_stream *in);

#endif
