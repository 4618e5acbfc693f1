/* SPDX-License-Identifier: GPL-2.0 */
/* Machine-check values the VMM injects, and KVM's MCE ioctls around them. */
#ifndef HWLAB_MCE_H
#define HWLAB_MCE_H

#include <stdint.h>
#include <linux/kvm.h>

#include "x86_mce.h"

/*
 * The same bank layout QEMU gives a guest: 10 banks, inject into bank 9.
 * With --mce-banks (a Scalable MCA guest gets KVM's most by default) there
 * are up to 32, KVM_X86_SETUP_MCE's limit; the AR bank stays 9 and the
 * banks above it hold deferred errors too.
 */
#define HWLAB_MCE_BANKS		10
#define HWLAB_MCE_MAX_BANKS	32
#define HWLAB_MCE_BANK		9
#define HWLAB_MCG_CAP_FLAGS	(MCG_CTL_P | MCG_SER_P)
#define HWLAB_MCG_CAP		(HWLAB_MCG_CAP_FLAGS | HWLAB_MCE_BANKS)
/*
 * AMD deferred errors (AO) wait in their bank until the guest's MCE poll
 * reads them; a second bank keeps one that is not yet read from being
 * overwritten by an AR (KVM would only set OVER on it, and the page of the
 * first error would be lost).
 */
#define HWLAB_MCE_BANK_DEFERRED	8
/*
 * The banks that may hold a deferred error when the guest has nbanks:
 * every bank but the AR one, bank 8 first (mce_pick_deferred_bank()). The
 * guest's poll reads them all at once, so a lost huge page (511 deferred
 * errors) is told nine pages a poll with QEMU's 10 banks, not one, and 31
 * with 32 banks.
 */
static inline unsigned int mce_deferred_banks(unsigned int nbanks)
{
	unsigned int all = nbanks >= 32 ? ~0u : (1u << nbanks) - 1;

	return all & ~(1u << HWLAB_MCE_BANK);
}
/*
 * An MCA broadcast as the CPUs that did not see the error find it, QEMU's
 * value (cpu_x86_inject_mce, MCE_INJECT_BROADCAST): VAL|UC in bank 1, with
 * no EN (this bank did not signal it) and no address, MCIP|RIPV.
 */
#define HWLAB_MCE_BANK_BROADCAST	1
/* MCi_MISC: address mode 2 (physical), recoverable address LSB 12. */
#define HWLAB_MCI_MISC		((MCI_MISC_ADDR_PHYS << 6) | 12)

struct vm;
struct vcpu;

enum mce_kind {
	MCE_AO,		/* action optional: the poison was found, not consumed */
	MCE_AR,		/* action required: the vCPU consumed the poison */
};

/* Which encoding a guest gets: its CPU vendor's (mce_event_prepare's style). */
#define MCE_STYLE_PAGE_LSB	(1 << 0)	/* LSB 12 at the si_addr page, for Linux */
#define MCE_STYLE_AMD		(1 << 1)	/* AMD's encodings, not Intel's */
#define MCE_STYLE_BROADCAST	(1 << 2)	/* an #MC reaches every vCPU (Intel) */
#define MCE_STYLE_SMCA		(1 << 3)	/* AMD with Scalable MCA (smca.h) */

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
 * The same for a Scalable MCA vCPU (--smca on; not QEMU's: it has none),
 * without MISCV. Intel's address mode and LSB in MCi_MISC (HWLAB_MCI_MISC)
 * mean nothing on AMD, whose MCA_MISC0 holds the error-threshold counter;
 * an SMCA guest reads MCA_MISC0 only when MISCV says it is valid, and
 * each of its reads is an exit to the VMM: one of the ~6 a page of a lost
 * huge page costs (7.2's mce_read_aux(): STATUS, MISC0 if MISCV, ADDR,
 * IPID, then the STATUS and DESTAT clears). Pure.
 */
void mce_encode_smca(enum mce_kind kind, uint64_t gpa, struct kvm_x86_mce *out);

/* What the other vCPUs get when one takes an #MC with MCA broadcast. Pure. */
void mce_encode_broadcast(struct kvm_x86_mce *out);

/*
 * The machine-check encoding and delivery the guest gets (vm->mce_style),
 * from the vCPUs' CPUID, --mce-vendor and --smca, and its bank count
 * (vm->mce_banks, --mce-banks); 0, or -1 after a message.
 */
int mce_choose_style(struct vm *vm);
/*
 * Give the vCPU MCG_CTL_P|MCG_SER_P and vm->mce_banks banks, which
 * mce_choose_style() found KVM supports. Returns 0, or -1 after a message
 * naming the failed ioctl.
 */
int mce_setup_vcpu(const struct vcpu *v);
/* The bank count for a guest: --mce-banks, else KVM's most with SMCA, else QEMU's 10. Pure. */
unsigned int mce_choose_banks(int opt_banks, int smca, int kvm_max_banks);

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

/*
 * The banks of mask that hold no error the guest has not read and cleared
 * yet, as a mask: one KVM_GET_MSRS. Unreadable counts as full (0): waiting
 * is safe, overwriting is not.
 */
unsigned int mce_free_banks(const struct vcpu *v, unsigned int mask);
/* The bank a deferred error goes to from a mask of free ones; -1 if none. Pure. */
int mce_pick_deferred_bank(unsigned int free_mask);
/* KVM_X86_SET_MCE; -1 with errno (and a message) if KVM refuses. */
int mce_inject(const struct vcpu *v, const struct kvm_x86_mce *mce);
/* A reset vCPU starts with no machine check in progress and every bank empty. */
int mce_reset_vcpu(const struct vcpu *v);

#endif
