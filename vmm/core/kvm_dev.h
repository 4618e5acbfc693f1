/* SPDX-License-Identifier: GPL-2.0 */
/* /dev/kvm, the system file descriptor: is KVM there, and what can it do. */
#ifndef HWLAB_KVM_DEV_H
#define HWLAB_KVM_DEV_H

#include <linux/kvm.h>

/*
 * Open /dev/kvm and check the API version. Returns the fd, or -1 after
 * saying why (no /dev/kvm and no svm/vmx flag: no hardware virtualization;
 * no /dev/kvm: module not loaded; or the open error).
 */
int kvm_dev_open(void);
/* KVM_GET_SUPPORTED_CPUID, grown until it fits; NULL after a message. */
struct kvm_cpuid2 *kvm_dev_supported_cpuid(int kvm_fd);
/*
 * Whether a guest's XSETBV reaches KVM: a scratch VM's vCPU, with cpuid,
 * sets CR4.OSXSAVE and XCR0 = x87|SSE in real mode and halts; KVM_GET_XCRS
 * then says whether KVM saw it. 1 if it did, 0 if not (the outer VM's
 * QEMU TCG does not intercept a nested guest's XSETBV), -1 if the probe
 * could not tell (after a message; callers then trust KVM). A CPUID
 * without XSAVE has nothing to probe: 1.
 */
int kvm_dev_xsetbv_exits(int kvm_fd, const struct kvm_cpuid2 *cpuid);
/* hwlab-vmm --check: what this host's KVM offers, as one report line; exit status. */
int kvm_dev_check(void);

#endif
