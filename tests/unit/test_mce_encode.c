// SPDX-License-Identifier: GPL-2.0
#include "mce.h"
#include "unit.h"

void test_mce_encode(void)
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
void test_mce_encode_amd(void)
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
