/* SPDX-License-Identifier: GPL-2.0 */
/* Machine-check values the VMM injects, and KVM's MCE ioctls around them. */
#ifndef HWLAB_MCE_H
#define HWLAB_MCE_H

#include <stdint.h>
#include <linux/kvm.h>

#define MCG_CTL_P		(1ULL << 8)
#define MCG_SER_P		(1ULL << 24)
#define MCG_STATUS_RIPV		(1ULL << 0)
#define MCG_STATUS_EIPV		(1ULL << 1)
#define MCG_STATUS_MCIP		(1ULL << 2)

#define MCI_STATUS_VAL		(1ULL << 63)
#define MCI_STATUS_OVER		(1ULL << 62)
#define MCI_STATUS_UC		(1ULL << 61)
#define MCI_STATUS_EN		(1ULL << 60)
#define MCI_STATUS_MISCV	(1ULL << 59)
#define MCI_STATUS_ADDRV	(1ULL << 58)
#define MCI_STATUS_PCC		(1ULL << 57)
#define MCI_STATUS_S		(1ULL << 56)
#define MCI_STATUS_AR		(1ULL << 55)

/* SDM "memory scrubbing" (AO) and "data load" (AR) error codes. */
#define MCACOD_SCRUB		0x00c0
#define MCACOD_DATA_LOAD	0x0134

#define MSR_IA32_MCG_CAP	0x179
#define MSR_IA32_MCG_STATUS	0x17a
#define MSR_IA32_MCx_STATUS(b)	(0x401 + 4 * (b))

/* The same bank layout QEMU gives a guest: 10 banks, inject into the last. */
#define HWLAB_MCE_BANKS		10
#define HWLAB_MCE_BANK		9
#define HWLAB_MCG_CAP		(MCG_CTL_P | MCG_SER_P | HWLAB_MCE_BANKS)
/* MCi_MISC: address mode 2 (physical), recoverable address LSB 12. */
#define HWLAB_MCI_MISC		((2ULL << 6) | 12)

enum mce_kind {
	MCE_AO,		/* action optional: the poison was found, not consumed */
	MCE_AR,		/* action required: the vCPU consumed the poison */
};

/* Fill a struct kvm_x86_mce for a memory error at gpa. Pure. */
void mce_encode(enum mce_kind kind, uint64_t gpa, struct kvm_x86_mce *out);

/*
 * Check what KVM supports and give the vCPU HWLAB_MCG_CAP. Returns 0, or -1
 * with a message in err.
 */
int mce_setup_vcpu(int kvm_fd, int vcpu_fd, char *err, unsigned long errlen);

enum mce_guest_state {
	MCE_GUEST_READY,
	MCE_GUEST_NO_MCE,	/* CR4.MCE clear */
	MCE_GUEST_IN_MCE,	/* MCG_STATUS.MCIP set: handling one already */
	MCE_GUEST_UNKNOWN,	/* the state could not be read */
};

/* Whether the guest can take a machine check now. */
enum mce_guest_state mce_guest_state(int vcpu_fd);
/* Why a state other than MCE_GUEST_READY keeps the machine check out. */
const char *mce_guest_state_reason(enum mce_guest_state state);

int mce_inject(int vcpu_fd, const struct kvm_x86_mce *mce);

#endif
