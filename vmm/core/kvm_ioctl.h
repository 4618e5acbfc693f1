/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ioctl()s on KVM file descriptors that name the failed request. Modelled
 * on the KVM selftests' kvm_ioctl()/vm_ioctl()/vcpu_ioctl(): the macro
 * stringifies the request, so every failure prints
 *   hwlab-vmm: error: KVM_SET_SREGS (vCPU 1): Invalid argument
 * and returns -1 with errno kept, for the caller to unwind.
 */
#ifndef HWLAB_KVM_IOCTL_H
#define HWLAB_KVM_IOCTL_H

#include <stdint.h>
#include <linux/kvm.h>

#define KVM_IOCTL_NO_VCPU	(-1)

int __kvm_ioctl(int fd, unsigned long req, void *arg, const char *name, int vcpu);

/* On the /dev/kvm system fd or a VM fd. */
#define kvm_ioctl(fd, req, arg)							\
	__kvm_ioctl(fd, req, (void *)(uintptr_t)(arg), #req, KVM_IOCTL_NO_VCPU)
/* On a vCPU: v is a struct vcpu (vm.h). */
#define vcpu_ioctl(v, req, arg)							\
	__kvm_ioctl((v)->fd, req, (void *)(uintptr_t)(arg), #req, (int)(v)->id)

/*
 * KVM_GET_MSRS / KVM_SET_MSRS return how many MSRs they processed and stop
 * at the first one KVM refuses, without errno: these name that MSR.
 */
int vcpu_get_msrs(int vcpu_fd, unsigned int vcpu_id, struct kvm_msrs *msrs);
int vcpu_set_msrs(int vcpu_fd, unsigned int vcpu_id, struct kvm_msrs *msrs);
/* The same for one MSR: 0, or -1 after the message naming it. */
int vcpu_get_msr(int vcpu_fd, unsigned int vcpu_id, uint32_t index, uint64_t *data);
int vcpu_set_msr(int vcpu_fd, unsigned int vcpu_id, uint32_t index, uint64_t data);

#endif
