/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A stand-in for /dev/kvm, for fuzzing the restore without KVM: the fuzz
 * target is linked with -Wl,--wrap=ioctl, so every ioctl() the VMM's code
 * makes comes here first. One on an fd made by fake_kvm_fd() is answered
 * as a KVM of this shape would: it has XSAVE (4 KiB, no XSAVE2) and XCRS,
 * lists a few MSRs and refuses KVM_SET_MSRS of any other (as KVM refuses
 * an MSR the vCPU's CPUID lacks), has a local APIC only once
 * KVM_CREATE_IRQCHIP was made on the VM, takes every other SET and
 * answers every GET with zeros. Any other fd goes to the real ioctl()
 * (the userfaultfd of migrate/poison_keep.c, for one).
 */
#ifndef HWLAB_FUZZ_FAKE_KVM_H
#define HWLAB_FUZZ_FAKE_KVM_H

/* An fd that answers as KVM's; vm: which fake VM it belongs to (0 or 1). */
int fake_kvm_fd(unsigned int vm);

int __real_ioctl(int fd, unsigned long req, ...);
int __wrap_ioctl(int fd, unsigned long req, ...);

#endif
