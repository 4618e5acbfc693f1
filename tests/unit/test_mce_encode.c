// SPDX-License-Identifier: GPL-2.0
#include "mce/mce.h"
#include "unit.h"

UNIT_TEST(mce_encode, "MCE encoding")
{
	struct kvm_x86_mce m;

	/* Action required: what QEMU injects for BUS_MCEERR_AR. */
	mce_encode(MCE_AR, 0x4a3000, &m);
	CHECK_EQ(m.status, 0xBD80000000000134ULL);
	CHECK_EQ(m.mcg_status, MCG_STATUS_MCIP | MCG_STATUS_RIPV | MCG_STATUS_EIPV);
	CHECK_EQ(m.mcg_status, 0x7);
	CHECK_EQ(m.addr, 0x4a3000);
	CHECK_EQ(m.misc, 0x8c);
	CHECK_EQ(m.bank, 9);

	/* Action optional: BUS_MCEERR_AO, no EIPV, no AR, scrub error code. */
	mce_encode(MCE_AO, 0x800000, &m);
	CHECK_EQ(m.status, 0xBD000000000000C0ULL);
	CHECK_EQ(m.mcg_status, 0x5);
	CHECK_EQ(m.addr, 0x800000);
	CHECK_EQ(m.misc, 0x8c);
	CHECK_EQ(m.bank, 9);

	/* the bank exists in the MCG_CAP we set up */
	CHECK(m.bank < (HWLAB_MCG_CAP & 0xff), "bank %u < %llu banks", m.bank,
	      HWLAB_MCG_CAP & 0xff);
	CHECK_EQ(HWLAB_MCG_CAP, 0x100010a);
}

/* AMD vCPUs: QEMU's values since "i386: Fix MCE support for AMD hosts". */
UNIT_TEST(mce_encode_amd, "MCE encoding, AMD vCPUs")
{
	struct kvm_x86_mce m;

	mce_encode_amd(MCE_AR, 0x4a3000, &m);
	CHECK_EQ(m.status, 0xBC00080000000000ULL);	/* VAL|UC|EN|MISCV|ADDRV|POISON */
	CHECK_EQ(m.mcg_status, 0x7);
	CHECK_EQ(m.addr, 0x4a3000);
	CHECK_EQ(m.misc, 0x8c);
	CHECK_EQ(m.bank, HWLAB_MCE_BANK);
	/* no Intel S/AR bits and no MCA error code: AMD's severity code reads neither */
	CHECK_EQ(m.status & (MCI_STATUS_S | MCI_STATUS_AR | 0xffff), 0);

	mce_encode_amd(MCE_AO, 0x800000, &m);
	CHECK_EQ(m.status, 0x9C00180000000000ULL);	/* VAL|EN|MISCV|ADDRV|DEFERRED|POISON */
	/* no UC: KVM writes the bank without a #MC, for the guest's poll */
	CHECK_EQ(m.status & MCI_STATUS_UC, 0);
	CHECK_EQ(m.bank, HWLAB_MCE_BANK_DEFERRED);
	CHECK(m.bank != HWLAB_MCE_BANK && m.bank < (HWLAB_MCG_CAP & 0xff),
	      "deferred errors have a bank of their own (%u)", m.bank);
	CHECK_EQ(m.addr, 0x800000);
}

/* Scalable MCA vCPUs: AMD's values less MISCV, whose MISC0 read is an exit. */
UNIT_TEST(mce_encode_smca, "MCE encoding, Scalable MCA vCPUs")
{
	struct kvm_x86_mce m, amd;

	mce_encode_smca(MCE_AR, 0x4a3000, &m);
	mce_encode_amd(MCE_AR, 0x4a3000, &amd);
	CHECK_EQ(m.status, 0xB400080000000000ULL);	/* VAL|UC|EN|ADDRV|POISON */
	CHECK_EQ(m.status, amd.status & ~MCI_STATUS_MISCV);
	CHECK_EQ(m.misc, 0);
	CHECK_EQ(m.mcg_status, amd.mcg_status);
	CHECK_EQ(m.bank, amd.bank);
	CHECK_EQ(m.addr, 0x4a3000);

	mce_encode_smca(MCE_AO, 0x800000, &m);
	CHECK_EQ(m.status, 0x9400180000000000ULL);	/* VAL|EN|ADDRV|DEFERRED|POISON */
	CHECK_EQ(m.misc, 0);
	CHECK_EQ(m.bank, HWLAB_MCE_BANK_DEFERRED);
	CHECK_EQ(m.addr, 0x800000);
}

/* MCA broadcast: what QEMU gives the CPUs that did not see the error. */
UNIT_TEST(mce_encode_broadcast, "MCA broadcast encoding")
{
	struct kvm_x86_mce m;

	mce_encode_broadcast(&m);
	CHECK_EQ(m.bank, 1);
	CHECK_EQ(m.status, MCI_STATUS_VAL | MCI_STATUS_UC);
	CHECK_EQ(m.status, 0xa000000000000000ULL);
	/* no EN: Linux's severity table calls it "Not enabled" and acts on nothing */
	CHECK_EQ(m.status & (MCI_STATUS_EN | MCI_STATUS_ADDRV | MCI_STATUS_PCC), 0);
	CHECK_EQ(m.mcg_status, MCG_STATUS_MCIP | MCG_STATUS_RIPV);
	CHECK_EQ(m.addr, 0);
	CHECK_EQ(m.misc, 0);
}

/* Which bank an AMD deferred error waits in: 8 first, never the AR bank. */
UNIT_TEST(mce_deferred_bank, "AMD deferred-error banks")
{
	unsigned int bank, every = 0;

	CHECK_EQ(mce_deferred_banks(HWLAB_MCE_BANKS), 0x1ff);
	CHECK_EQ(mce_deferred_banks(HWLAB_MCE_BANKS) & (1u << HWLAB_MCE_BANK), 0);
	CHECK_EQ(mce_pick_deferred_bank(mce_deferred_banks(HWLAB_MCE_BANKS)), HWLAB_MCE_BANK_DEFERRED);
	CHECK_EQ(mce_pick_deferred_bank(0x0ff), 7);
	CHECK_EQ(mce_pick_deferred_bank(0x001), 0);
	CHECK_EQ(mce_pick_deferred_bank(0), -1);
	/* the AR bank is never picked */
	CHECK_EQ(mce_pick_deferred_bank(1u << HWLAB_MCE_BANK), -1);
	/* banks above it (a guest with more than QEMU's 10) after 8..0, top first */
	CHECK_EQ(mce_pick_deferred_bank(~0u << HWLAB_MCE_BANK), 31);
	CHECK_EQ(mce_pick_deferred_bank(1u << 10 | 1u << 3), 3);
	CHECK_EQ(mce_pick_deferred_bank(1u << 10 | 1u << HWLAB_MCE_BANK), 10);
	/* taking one bank at a time from a guest's free banks gives each once */
	for (unsigned int free_mask = mce_deferred_banks(HWLAB_MCE_BANKS);
	     (bank = mce_pick_deferred_bank(free_mask)) != -1u; free_mask &= ~(1u << bank))
		every |= 1u << bank;
	CHECK_EQ(every, mce_deferred_banks(HWLAB_MCE_BANKS));
	every = 0;
	for (unsigned int free_mask = mce_deferred_banks(32);
	     (bank = mce_pick_deferred_bank(free_mask)) != -1u; free_mask &= ~(1u << bank))
		every |= 1u << bank;
	CHECK_EQ(every, 0xfffffdff);
}

/* How many banks: QEMU's 10 unless told, or KVM's most (32) for an SMCA guest. */
UNIT_TEST(mce_bank_count, "machine-check bank count: QEMU's 10, 32 with SMCA, --mce-banks")
{
	CHECK_EQ(mce_deferred_banks(10), 0x1ff);
	CHECK_EQ(mce_deferred_banks(11), 0x5ff);
	CHECK_EQ(mce_deferred_banks(32), 0xfffffdff);
	CHECK_EQ(__builtin_popcount(mce_deferred_banks(32)), 31);
	/* auto */
	CHECK_EQ(mce_choose_banks(0, 0, 32), HWLAB_MCE_BANKS);
	CHECK_EQ(mce_choose_banks(0, 1, 32), 32);
	CHECK_EQ(mce_choose_banks(0, 1, 64), 32);	/* a KVM with more: ours fit 32 */
	CHECK_EQ(mce_choose_banks(0, 1, 16), 16);
	CHECK_EQ(mce_choose_banks(0, 1, 4), HWLAB_MCE_BANKS);	/* refused at vCPU setup */
	CHECK_EQ(mce_choose_banks(0, 1, -1), HWLAB_MCE_BANKS);	/* the ioctl failed */
	/* given */
	CHECK_EQ(mce_choose_banks(32, 0, 32), 32);
	CHECK_EQ(mce_choose_banks(12, 1, 32), 12);
	CHECK_EQ(mce_choose_banks(64, 0, 64), HWLAB_MCE_MAX_BANKS);	/* never past the arrays */
}
