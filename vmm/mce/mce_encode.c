// SPDX-License-Identifier: GPL-2.0
/*
 * Kept apart from the ioctl code so the host unit tests can check the exact
 * bits without a VM. The values match what QEMU injects
 * (target/i386/kvm/kvm.c: kvm_mce_inject), which Linux guests recover from:
 * AR needs UC|S|AR with RIPV|EIPV, AO needs UC|S without AR.
 */
#include "mce/mce.h"

#include <string.h>

void mce_encode(enum mce_kind kind, uint64_t gpa, struct kvm_x86_mce *out)
{
	memset(out, 0, sizeof(*out));
	out->bank = HWLAB_MCE_BANK;
	out->status = MCI_STATUS_VAL | MCI_STATUS_UC | MCI_STATUS_EN | MCI_STATUS_MISCV |
		      MCI_STATUS_ADDRV | MCI_STATUS_S;
	out->mcg_status = MCG_STATUS_MCIP | MCG_STATUS_RIPV;
	if (kind == MCE_AR) {
		out->status |= MCI_STATUS_AR | MCACOD_DATA_LOAD;
		out->mcg_status |= MCG_STATUS_EIPV;
	} else {
		out->status |= MCACOD_SCRUB;
	}
	out->addr = gpa;
	out->misc = HWLAB_MCI_MISC;
}

void mce_encode_amd(enum mce_kind kind, uint64_t gpa, struct kvm_x86_mce *out)
{
	memset(out, 0, sizeof(*out));
	out->status = MCI_STATUS_VAL | MCI_STATUS_EN | MCI_STATUS_MISCV | MCI_STATUS_ADDRV |
		      MCI_STATUS_POISON;
	out->mcg_status = MCG_STATUS_MCIP | MCG_STATUS_RIPV;
	if (kind == MCE_AR) {
		out->bank = HWLAB_MCE_BANK;
		out->status |= MCI_STATUS_UC;
		out->mcg_status |= MCG_STATUS_EIPV;
	} else {
		out->bank = HWLAB_MCE_BANK_DEFERRED;
		out->status |= MCI_STATUS_DEFERRED;
	}
	out->addr = gpa;
	out->misc = HWLAB_MCI_MISC;
}

void mce_encode_smca(enum mce_kind kind, uint64_t gpa, struct kvm_x86_mce *out)
{
	mce_encode_amd(kind, gpa, out);
	out->status &= ~MCI_STATUS_MISCV;
	out->misc = 0;
}

void mce_encode_broadcast(struct kvm_x86_mce *out)
{
	memset(out, 0, sizeof(*out));
	out->bank = HWLAB_MCE_BANK_BROADCAST;
	out->status = MCI_STATUS_VAL | MCI_STATUS_UC;
	out->mcg_status = MCG_STATUS_MCIP | MCG_STATUS_RIPV;
}
