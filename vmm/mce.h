/* SPDX-License-Identifier: GPL-2.0 */
/* Machine-check values the VMM injects, and KVM's MCE ioctls around them. */
#ifndef HWLAB_MCE_H
#define HWLAB_MCE_H

#include <stdint.h>
#include <linux/kvm.h>

#include "x86_mce.h"

/* The same bank layout QEMU gives a guest: 10 banks, inject into the last. */
#define HWLAB_MCE_BANKS		10
#define HWLAB_MCE_BANK		9
#define HWLAB_MCG_CAP		(MCG_CTL_P | MCG_SER_P | HWLAB_MCE_BANKS)
/*
 * AMD deferred errors (AO) wait in their bank until the guest's MCE poll
 * reads them; a second bank keeps one that is not yet read from being
 * overwritten by an AR (KVM would only set OVER on it, and the page of the
 * first error would be lost).
 */
#define HWLAB_MCE_BANK_DEFERRED	8
/* MCi_MISC: address mode 2 (physical), recoverable address LSB 12. */
#define HWLAB_MCI_MISC		((MCI_MISC_ADDR_PHYS << 6) | 12)

struct vcpu;

enum mce_kind {
	MCE_AO,		/* action optional: the poison was found, not consumed */
	MCE_AR,		/* action required: the vCPU consumed the poison */
};

/* Which encoding a guest gets: its CPU vendor's (mce_event_prepare's style). */
#define MCE_STYLE_PAGE_LSB	(1 << 0)	/* LSB 12 at the si_addr page, for Linux */
#define MCE_STYLE_AMD		(1 << 1)	/* AMD's encodings, not Intel's */

/* Fill a struct kvm_x86_mce for a memory error at gpa, Intel's way. Pure. */
void mce_encode(enum mce_kind kind, uint64_t gpa, struct kvm_x86_mce *out);
/*
 * The same for an AMD vCPU, as QEMU injects it since its AMD support
 * (kvm_mce_inject, "i386: Fix MCE support for AMD hosts"): AR is an
 * uncorrected error with POISON and a #MC; AO is a deferred error, with no
 * UC, so KVM only writes the bank and the guest's MCE poll finds it, as it
 * would on hardware. Neither carries Intel's S/AR bits or MCA error codes,
 * which AMD's severity code does not read. Pure.
 */
void mce_encode_amd(enum mce_kind kind, uint64_t gpa, struct kvm_x86_mce *out);

/*
 * Check what KVM supports and give the vCPU HWLAB_MCG_CAP. Returns 0, or -1
 * after a message naming what is missing or which ioctl failed.
 */
int mce_setup_vcpu(int kvm_fd, const struct vcpu *v);

enum mce_guest_state {
	MCE_GUEST_READY,
	MCE_GUEST_NO_MCE,	/* CR4.MCE clear */
	MCE_GUEST_IN_MCE,	/* MCG_STATUS.MCIP set: handling one already */
	MCE_GUEST_UNKNOWN,	/* the state could not be read */
};

/* Whether the guest can take a machine check now. */
enum mce_guest_state mce_guest_state(const struct vcpu *v);
/* Why a state other than MCE_GUEST_READY keeps the machine check out. */
const char *mce_guest_state_reason(enum mce_guest_state state);

/* Whether bank holds an error the guest has not read and cleared yet. */
int mce_bank_busy(const struct vcpu *v, unsigned int bank);
/* KVM_X86_SET_MCE; -1 with errno (and a message) if KVM refuses. */
int mce_inject(const struct vcpu *v, const struct kvm_x86_mce *mce);
/* A reset vCPU starts with no machine check in progress and banks 8 and 9 empty. */
int mce_reset_vcpu(const struct vcpu *v);

#endif
