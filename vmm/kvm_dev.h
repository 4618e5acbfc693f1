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
/* hwlab-vmm --check: what this host's KVM offers, as one report line; exit status. */
int kvm_dev_check(void);

#endif
