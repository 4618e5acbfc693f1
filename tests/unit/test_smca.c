// SPDX-License-Identifier: GPL-2.0
/*
 * The SMCA view (vmm/mce/smca.c) without KVM: the guest's RDMSR/WRMSR of
 * the SMCA bank registers, MSR_CU_DEF_ERR and the x2APIC extended LVT, and
 * the decision how a deferred error is told. A fake smca_backend stands in
 * for the vCPU: the legacy bank MSRs in an array, APICBASE and HWCR as the
 * test sets them, and a switch that makes KVM_GET/SET_MSRS fail.
 */
#include <string.h>

#include "mce/smca.h"
#include "unit.h"
#include "x86_mce.h"

#define LEGACY_BASE	0x400u
#define LEGACY_COUNT	(4 * HWLAB_MCE_MAX_BANKS)
/* the fixture's vCPU has QEMU's 10 banks; bank_count() gives it more */
#define LAST_BANK	(HWLAB_MCE_BANKS - 1)
#define SMCA_MSR(bank, reg) (SMCA_MSR_BASE + SMCA_MSR_STRIDE * (bank) + (reg))
/* Linux's DEFERRED_ERROR_VECTOR: what a guest programs into the LVT entry */
#define DFR_VECTOR	0xf4u

struct fake_vcpu {
	uint64_t legacy[LEGACY_COUNT];	/* MSR_IA32_MCx_{CTL,STATUS,ADDR,MISC}, from 0x400 */
	uint64_t apicbase, hwcr;
	int fail_get, fail_set;		/* KVM_GET/SET_MSRS failing */
	/* an index the fake does not hold: smca.c asked KVM for something else */
	unsigned int stray;
};

static int fake_get(void *ctx, uint32_t index, uint64_t *data)
{
	struct fake_vcpu *f = ctx;

	if (f->fail_get)
		return -1;
	if (index == MSR_IA32_APICBASE)
		*data = f->apicbase;
	else if (index == MSR_K7_HWCR)
		*data = f->hwcr;
	else if (index >= LEGACY_BASE && index < LEGACY_BASE + LEGACY_COUNT)
		*data = f->legacy[index - LEGACY_BASE];
	else {
		f->stray++;
		return -1;
	}
	return 0;
}

static int fake_set(void *ctx, uint32_t index, uint64_t data)
{
	struct fake_vcpu *f = ctx;

	if (f->fail_set)
		return -1;
	if (index < LEGACY_BASE || index >= LEGACY_BASE + LEGACY_COUNT) {
		f->stray++;
		return -1;
	}
	f->legacy[index - LEGACY_BASE] = data;
	return 0;
}

static struct fake_vcpu fake;
static const struct smca_backend backend = { .get_msr = fake_get, .set_msr = fake_set,
					     .ctx = &fake };
static struct smca_vcpu s;

/* a vCPU at power-on, in x2APIC mode (as a Linux guest on KVM with CPUID.HYPERVISOR) */
static void setup(void)
{
	unsigned int i;

	memset(&fake, 0, sizeof(fake));
	for (i = 0; i < LEGACY_COUNT; i++)
		fake.legacy[i] = 0x1111000000000000ull | (LEGACY_BASE + i);
	fake.apicbase = 0xfee00000ull | APICBASE_ENABLE | APICBASE_X2APIC;
	memset(&s, 0, sizeof(s));
	smca_vcpu_reset(&s, HWLAB_MCE_BANKS);
}

/* RDMSR as the guest sees it: the value, or GP for a #GP */
#define GP 0xbad0bad0bad0bad0ull
static uint64_t rd(uint32_t index)
{
	uint64_t v = 0;

	return smca_msr_read(&s, &backend, index, &v) ? GP : v;
}

static int wr(uint32_t index, uint64_t data)
{
	return smca_msr_write(&s, &backend, index, data);
}

/* whether the legacy MSRs are as in before, index aside (0: none aside) */
static int legacy_same_but(const uint64_t *before, uint32_t index)
{
	unsigned int i;

	for (i = 0; i < LEGACY_COUNT; i++)
		if (LEGACY_BASE + i != index && fake.legacy[i] != before[i])
			return 0;
	return 1;
}

/* CTL, STATUS, ADDR, MISC0: the legacy bank's, with KVM's checks on the guest's writes */
static void check_legacy_regs(unsigned int bank)
{
	static const unsigned int regs[] = { SMCA_CTL, SMCA_STATUS, SMCA_ADDR, SMCA_MISC0 };
	static const uint32_t legacy[] = { 0x400, 0x401, 0x402, 0x403 };
	uint64_t before[LEGACY_COUNT];
	unsigned int i;

	for (i = 0; i < 4; i++) {
		uint32_t msr = legacy[i] + 4 * bank;

		CHECK(rd(SMCA_MSR(bank, regs[i])) == fake.legacy[msr - LEGACY_BASE],
		      "bank %u reg %u reads MSR %#x", bank, regs[i], msr);
	}
	/* ADDR and MISC0 take anything, into their own legacy MSR and no other */
	memcpy(before, fake.legacy, sizeof(before));
	CHECK_EQ(wr(SMCA_MSR(bank, SMCA_ADDR), 0x523000), 0);
	CHECK_EQ(fake.legacy[0x402 + 4 * bank - LEGACY_BASE], 0x523000);
	CHECK(legacy_same_but(before, 0x402 + 4 * bank), "bank %u ADDR: only MCi_ADDR", bank);
	memcpy(before, fake.legacy, sizeof(before));
	CHECK_EQ(wr(SMCA_MSR(bank, SMCA_MISC0), 0xd01000000000008cull), 0);
	CHECK_EQ(fake.legacy[0x403 + 4 * bank - LEGACY_BASE], 0xd01000000000008cull);
	CHECK(legacy_same_but(before, 0x403 + 4 * bank), "bank %u MISC0: only MCi_MISC", bank);

	/* CTL: 0 or all ones, bits 10 and 0 free (KVM's set_msr_mce()) */
	memcpy(before, fake.legacy, sizeof(before));
	CHECK_EQ(wr(SMCA_MSR(bank, SMCA_CTL), 0), 0);
	CHECK_EQ(fake.legacy[0x400 + 4 * bank - LEGACY_BASE], 0);
	CHECK(legacy_same_but(before, 0x400 + 4 * bank), "bank %u CTL: only MCi_CTL", bank);
	CHECK_EQ(wr(SMCA_MSR(bank, SMCA_CTL), ~0ull), 0);
	CHECK_EQ(fake.legacy[0x400 + 4 * bank - LEGACY_BASE], ~0ull);
	CHECK_EQ(wr(SMCA_MSR(bank, SMCA_CTL), ~0ull & ~(1ull << 10) & ~1ull), 0);
	CHECK_EQ(fake.legacy[0x400 + 4 * bank - LEGACY_BASE], ~0ull & ~(1ull << 10) & ~1ull);
	memcpy(before, fake.legacy, sizeof(before));
	CHECK_EQ(wr(SMCA_MSR(bank, SMCA_CTL), 0x5), -1);
	CHECK_EQ(wr(SMCA_MSR(bank, SMCA_CTL), ~0ull & ~(1ull << 9)), -1);
	CHECK(legacy_same_but(before, 0), "bank %u: a refused CTL write changes nothing", bank);

	/* STATUS: 0 always; anything else only with HWCR.McStatusWrEn */
	fake.hwcr = ~HWCR_MCSTATUSWREN;
	CHECK_EQ(wr(SMCA_MSR(bank, SMCA_STATUS), 0), 0);
	CHECK_EQ(fake.legacy[0x401 + 4 * bank - LEGACY_BASE], 0);
	memcpy(before, fake.legacy, sizeof(before));
	CHECK_EQ(wr(SMCA_MSR(bank, SMCA_STATUS), 0xbd000000000000c0ull), -1);
	CHECK(legacy_same_but(before, 0), "bank %u: a refused STATUS write changes nothing", bank);
	fake.hwcr = HWCR_MCSTATUSWREN;
	CHECK_EQ(wr(SMCA_MSR(bank, SMCA_STATUS), 0xbd000000000000c0ull), 0);
	CHECK_EQ(fake.legacy[0x401 + 4 * bank - LEGACY_BASE], 0xbd000000000000c0ull);
	CHECK(legacy_same_but(before, 0x401 + 4 * bank), "bank %u STATUS: only MCi_STATUS", bank);
	CHECK_EQ(rd(SMCA_MSR(bank, SMCA_STATUS)), 0xbd000000000000c0ull);
	/* clearing needs no McStatusWrEn: the guest's handler does it after every error */
	fake.hwcr = 0;
	CHECK_EQ(wr(SMCA_MSR(bank, SMCA_STATUS), 0), 0);
	CHECK_EQ(fake.legacy[0x401 + 4 * bank - LEGACY_BASE], 0);
}

/* CONFIG, IPID, SYND*, DESTAT, DEADDR, MISC1-4: kept in struct smca_vcpu */
static void check_kept_regs(unsigned int bank)
{
	unsigned int r;

	CHECK_EQ(rd(SMCA_MSR(bank, SMCA_CONFIG)), SMCA_CONFIG_RO);
	/* McaX, DeferredErrorLoggingSupported, DeferredIntTypeSupported */
	CHECK_EQ(SMCA_CONFIG_RO, 0x25);
	/* the guest's RW bits only: McaXEn and DeferredIntType; the RO bits stay set */
	CHECK_EQ(wr(SMCA_MSR(bank, SMCA_CONFIG), ~0ull), 0);
	CHECK_EQ(rd(SMCA_MSR(bank, SMCA_CONFIG)), SMCA_CONFIG_RO | (1ull << 32) | (3ull << 37));
	CHECK_EQ(wr(SMCA_MSR(bank, SMCA_CONFIG), (1ull << 32) | (1ull << 37) | (1ull << 10)), 0);
	CHECK_EQ(rd(SMCA_MSR(bank, SMCA_CONFIG)), SMCA_CONFIG_RO | (1ull << 32) | (1ull << 37));
	CHECK_EQ(wr(SMCA_MSR(bank, SMCA_CONFIG), 0), 0);
	CHECK_EQ(rd(SMCA_MSR(bank, SMCA_CONFIG)), SMCA_CONFIG_RO);

	/* IPID: a UMC (HWID 0x96, McaType 0), instance = bank; writes ignored */
	CHECK_EQ(rd(SMCA_MSR(bank, SMCA_IPID)), (0x96ull << 32) | bank);
	CHECK_EQ(wr(SMCA_MSR(bank, SMCA_IPID), 0x12345678ull), 0);
	CHECK_EQ(rd(SMCA_MSR(bank, SMCA_IPID)), (0x96ull << 32) | bank);

	/* DESTAT, DEADDR, MISC1-4 keep what was written, each its own */
	CHECK_EQ(rd(SMCA_MSR(bank, SMCA_DESTAT)), 0);
	CHECK_EQ(rd(SMCA_MSR(bank, SMCA_DEADDR)), 0);
	CHECK_EQ(wr(SMCA_MSR(bank, SMCA_DESTAT), 0x9c00000000000000ull | bank), 0);
	CHECK_EQ(wr(SMCA_MSR(bank, SMCA_DEADDR), 0x7000ull | bank), 0);
	for (r = SMCA_MISC1; r <= SMCA_MISC4; r++) {
		CHECK_EQ(rd(SMCA_MSR(bank, r)), 0);
		CHECK_EQ(wr(SMCA_MSR(bank, r), 0xc0000000ull + 0x100 * r + bank), 0);
	}
	CHECK_EQ(rd(SMCA_MSR(bank, SMCA_DESTAT)), 0x9c00000000000000ull | bank);
	CHECK_EQ(rd(SMCA_MSR(bank, SMCA_DEADDR)), 0x7000ull | bank);
	for (r = SMCA_MISC1; r <= SMCA_MISC4; r++)
		CHECK(rd(SMCA_MSR(bank, r)) == 0xc0000000ull + 0x100 * r + bank,
		      "bank %u MISC%u kept", bank, r - SMCA_MISC1 + 1);

	/* SYND, SYND1, SYND2: no SYNDV in what hwlab-vmm injects, so 0, whatever is written */
	CHECK_EQ(wr(SMCA_MSR(bank, SMCA_SYND), ~0ull), 0);
	CHECK_EQ(wr(SMCA_MSR(bank, SMCA_SYND1), ~0ull), 0);
	CHECK_EQ(wr(SMCA_MSR(bank, SMCA_SYND2), ~0ull), 0);
	CHECK_EQ(rd(SMCA_MSR(bank, SMCA_SYND)), 0);
	CHECK_EQ(rd(SMCA_MSR(bank, SMCA_SYND1)), 0);
	CHECK_EQ(rd(SMCA_MSR(bank, SMCA_SYND2)), 0);

	/* slot 7 of a bank is reserved: #GP both ways */
	CHECK_EQ(rd(SMCA_MSR(bank, 7)), GP);
	CHECK_EQ(wr(SMCA_MSR(bank, 7), 0), -1);
}

UNIT_TEST(smca_bank_msrs, "SMCA: bank registers, legacy-backed and kept, KVM's write rules")
{
	uint64_t before[LEGACY_COUNT];

	setup();
	check_legacy_regs(0);
	check_kept_regs(0);
	check_legacy_regs(LAST_BANK);
	check_kept_regs(LAST_BANK);
	/* one bank's kept registers are not another's */
	CHECK_EQ(rd(SMCA_MSR(0, SMCA_DESTAT)), 0x9c00000000000000ull);
	CHECK_EQ(rd(SMCA_MSR(1, SMCA_DESTAT)), 0);
	CHECK_EQ(rd(SMCA_MSR(1, SMCA_MISC1)), 0);
	CHECK_EQ(fake.stray, 0);

	/* the range: first MSR of bank 0 to the last of the last bank, nothing either side */
	CHECK_EQ(SMCA_MSR_END, 0xc0002200);
	CHECK(rd(SMCA_MSR(LAST_BANK, SMCA_SYND2)) != GP, "the last bank's last MSR");
	/* a bank the vCPU does not have (MCG_CAP says 10): a #GP, as on hardware */
	CHECK_EQ(rd(SMCA_MSR(LAST_BANK + 1, SMCA_CONFIG)), GP);
	CHECK_EQ(rd(SMCA_MSR(LAST_BANK + 1, SMCA_IPID)), GP);
	CHECK_EQ(wr(SMCA_MSR(LAST_BANK + 1, SMCA_DESTAT), 0), -1);
	CHECK_EQ(rd(SMCA_MSR(HWLAB_MCE_MAX_BANKS - 1, SMCA_STATUS)), GP);
	CHECK_EQ(rd(SMCA_MSR_END), GP);
	CHECK_EQ(wr(SMCA_MSR_END, 0), -1);
	CHECK_EQ(rd(SMCA_MSR_BASE - 1), GP);
	CHECK_EQ(wr(SMCA_MSR_BASE - 1, 0), -1);
	CHECK(smca_msr_is_ours(SMCA_MSR_BASE) && smca_msr_is_ours(SMCA_MSR_END - 1),
	      "the bank range is ours");
	CHECK(!smca_msr_is_ours(SMCA_MSR_END) && !smca_msr_is_ours(SMCA_MSR_BASE - 1),
	      "not beyond it");
	CHECK(!smca_msr_is_ours(0x401), "the legacy banks stay KVM's");

	/* KVM_GET/SET_MSRS failing: a #GP, and the kept registers still answer */
	fake.fail_get = 1;
	CHECK_EQ(rd(SMCA_MSR(0, SMCA_CTL)), GP);
	CHECK_EQ(rd(SMCA_MSR(0, SMCA_STATUS)), GP);
	CHECK_EQ(rd(SMCA_MSR(LAST_BANK, SMCA_MISC0)), GP);
	/* STATUS non-zero needs HWCR: unreadable, so refused */
	fake.hwcr = HWCR_MCSTATUSWREN;
	CHECK_EQ(wr(SMCA_MSR(0, SMCA_STATUS), 1), -1);
	CHECK_EQ(rd(SMCA_MSR(0, SMCA_IPID)), 0x96ull << 32);
	fake.fail_get = 0;
	fake.fail_set = 1;
	memcpy(before, fake.legacy, sizeof(before));
	CHECK_EQ(wr(SMCA_MSR(0, SMCA_CTL), 0), -1);
	CHECK_EQ(wr(SMCA_MSR(0, SMCA_STATUS), 0), -1);
	CHECK_EQ(wr(SMCA_MSR(0, SMCA_ADDR), 0), -1);
	CHECK_EQ(wr(SMCA_MSR(LAST_BANK, SMCA_MISC0), 0), -1);
	CHECK(legacy_same_but(before, 0), "failed writes change nothing");
	CHECK_EQ(wr(SMCA_MSR(0, SMCA_DESTAT), 5), 0);
	fake.fail_set = 0;

	/* every access an exit, every #GP a refusal */
	s.msr_exits = s.msr_refused = 0;
	rd(SMCA_MSR(0, SMCA_CTL));			/* ok */
	rd(SMCA_MSR(0, 7));				/* refused: reserved */
	wr(SMCA_MSR(0, SMCA_CTL), 3);			/* refused: KVM's CTL rule */
	wr(SMCA_MSR(0, SMCA_CONFIG), 0);		/* ok */
	rd(SMCA_MSR_END);				/* refused: past the last bank */
	rd(MSR_CU_DEF_ERR);				/* ok */
	fake.fail_get = 1;
	rd(SMCA_MSR(1, SMCA_ADDR));			/* refused: backend */
	fake.fail_get = 0;
	CHECK_EQ(s.msr_exits, 7);
	CHECK_EQ(s.msr_refused, 4);
	CHECK_EQ(fake.stray, 0);
}

UNIT_TEST(smca_cu_def_err, "SMCA: MSR_CU_DEF_ERR, reset 0x1020, writes masked")
{
	setup();
	CHECK(smca_msr_is_ours(MSR_CU_DEF_ERR), "0xc0000410 is ours");
	CHECK(!smca_msr_is_ours(MSR_CU_DEF_ERR + 1), "0xc0000411 is not");
	/* Zen firmware's offsets: deferred 2 (bits 7:4), threshold 1 (15:12) */
	CHECK_EQ(rd(0xc0000410), 0x1020);
	CHECK_EQ(CU_DEF_ERR_DFR_OFFSET(rd(0xc0000410)), 2);
	CHECK_EQ(wr(0xc0000410, ~0ull), 0);
	CHECK_EQ(rd(0xc0000410), 0xf0f6);
	CHECK_EQ(wr(0xc0000410, 0x1030), 0);
	CHECK_EQ(rd(0xc0000410), 0x1030);
	CHECK_EQ(wr(0xc0000410, 0x10001), 0);
	CHECK_EQ(rd(0xc0000410), 0);
	CHECK_EQ(rd(0xc0000411), GP);
	CHECK_EQ(fake.stray, 0);
}

UNIT_TEST(smca_eilvt, "SMCA: the x2APIC extended LVT 0x850-0x853, x2APIC mode only")
{
	static const uint64_t not_x2apic[] = {
		0, 0xfee00000ull | APICBASE_ENABLE, 0xfee00000ull | APICBASE_X2APIC,
	};
	unsigned int i, k;

	setup();
	CHECK_EQ(X2APIC_MSR_EILVT0, 0x800 + (0x500 >> 4));
	for (i = 0; i < 4; i++)
		CHECK(smca_msr_is_ours(0x850 + i), "%#x is ours", 0x850 + i);
	CHECK(!smca_msr_is_ours(0x854), "0x854 is not ours");
	CHECK(!smca_msr_is_ours(0x84f), "0x84f is not ours");

	/* xAPIC, disabled, or x2APIC without EN: the 0x8xx MSRs do not exist */
	for (k = 0; k < sizeof(not_x2apic) / sizeof(not_x2apic[0]); k++) {
		fake.apicbase = not_x2apic[k];
		for (i = 0; i < 4; i++) {
			CHECK(rd(0x850 + i) == GP, "APICBASE %#llx: read %#x refused",
			      (unsigned long long)not_x2apic[k], 0x850 + i);
			CHECK(wr(0x850 + i, 0xf4) == -1, "APICBASE %#llx: write %#x refused",
			      (unsigned long long)not_x2apic[k], 0x850 + i);
		}
	}
	/* APICBASE unreadable: not taken for x2APIC mode */
	fake.apicbase = 0xfee00000ull | APICBASE_ENABLE | APICBASE_X2APIC;
	fake.fail_get = 1;
	CHECK_EQ(rd(0x850), GP);
	CHECK_EQ(wr(0x850, 0xf4), -1);
	fake.fail_get = 0;

	/* x2APIC: masked at reset, writes keep vector, message type and mask */
	for (i = 0; i < 4; i++)
		CHECK(rd(0x850 + i) == 0x10000, "%#x masked at reset", 0x850 + i);
	CHECK_EQ(wr(0x852, 0xffffffffull), 0);
	CHECK_EQ(rd(0x852), 0x107ff);
	CHECK_EQ(wr(0x852, DFR_VECTOR), 0);
	CHECK_EQ(rd(0x852), DFR_VECTOR);
	CHECK_EQ(rd(0x851), 0x10000);
	CHECK_EQ(rd(0x853), 0x10000);
	/* 0x854 (APIC 0x540) is past the four entries */
	CHECK_EQ(rd(0x854), GP);
	CHECK_EQ(wr(0x854, 0), -1);
	CHECK_EQ(fake.stray, 0);
}

/* the guest as Linux 7.2 leaves it: bank's DeferredIntType APIC, LVT entry 2 = 0xf4 */
static void guest_enabled(unsigned int bank)
{
	setup();
	wr(SMCA_MSR(bank, SMCA_CONFIG), SMCA_CONFIG_MCAXEN | (1ull << 37));
	wr(0x850 + 2, DFR_VECTOR);
}

static enum smca_dfr decide(unsigned int bank, uint8_t *vector)
{
	*vector = 0;
	return smca_dfr_decide(&s, bank, vector);
}

UNIT_TEST(smca_dfr_decide, "SMCA: deferred error, interrupt or poll, and why")
{
	static const enum smca_dfr polls[] = {
		SMCA_DFR_BANK_NOT_APIC, SMCA_DFR_OFFSET_BAD, SMCA_DFR_MASKED, SMCA_DFR_NOT_FIXED,
		SMCA_DFR_BAD_VECTOR,
	};
	static const char *const why[] = {
		"DeferredIntType", "MSR_CU_DEF_ERR", "masked", "fixed", "below 32",
	};
	uint8_t vector;
	unsigned int i, j;

	/* enabled: the vector the guest programmed, in the first and last bank */
	guest_enabled(0);
	CHECK_EQ(decide(0, &vector), SMCA_DFR_INTERRUPT);
	CHECK_EQ(vector, DFR_VECTOR);
	guest_enabled(LAST_BANK);
	CHECK_EQ(decide(LAST_BANK, &vector), SMCA_DFR_INTERRUPT);
	CHECK_EQ(vector, DFR_VECTOR);
	/* another bank, not configured: its poll */
	CHECK_EQ(decide(0, &vector), SMCA_DFR_BANK_NOT_APIC);
	/*
	 * A bank number past the banks: the poll, not a read past config[],
	 * even where what lies beyond it (every bank's DESTAT, DEADDR, MISC1-4)
	 * would read as DeferredIntType APIC.
	 */
	for (i = 0; i < HWLAB_MCE_BANKS; i++) {
		wr(SMCA_MSR(i, SMCA_CONFIG), 1ull << 37);
		for (j = SMCA_DESTAT; j <= SMCA_MISC4; j++)
			wr(SMCA_MSR(i, j), 1ull << 37);
	}
	CHECK_EQ(decide(HWLAB_MCE_BANKS, &vector), SMCA_DFR_BANK_NOT_APIC);
	CHECK_EQ(decide(HWLAB_MCE_BANKS + 1, &vector), SMCA_DFR_BANK_NOT_APIC);
	CHECK_EQ(decide(~0u, &vector), SMCA_DFR_BANK_NOT_APIC);

	/* DeferredIntType 0 (none), 2 (SMI), 3 (reserved): only 1 is APIC */
	for (i = 0; i < 4; i++) {
		guest_enabled(3);
		wr(SMCA_MSR(3, SMCA_CONFIG), (uint64_t)i << 37);
		CHECK(decide(3, &vector) == (i == 1 ? SMCA_DFR_INTERRUPT : SMCA_DFR_BANK_NOT_APIC),
		      "DeferredIntType %u", i);
	}

	/* MSR_CU_DEF_ERR names the entry: another offset, another entry; 4 and up, none */
	guest_enabled(3);
	wr(0x851, 0x40);
	wr(MSR_CU_DEF_ERR, 0x1010);
	CHECK_EQ(decide(3, &vector), SMCA_DFR_INTERRUPT);
	CHECK_EQ(vector, 0x40);
	wr(MSR_CU_DEF_ERR, 0x1030);
	CHECK_EQ(decide(3, &vector), SMCA_DFR_MASKED);	/* entry 3: reset, masked */
	wr(MSR_CU_DEF_ERR, 0x1040);
	CHECK_EQ(decide(3, &vector), SMCA_DFR_OFFSET_BAD);
	wr(MSR_CU_DEF_ERR, 0x10f0);
	CHECK_EQ(decide(3, &vector), SMCA_DFR_OFFSET_BAD);

	/* the entry: masked, not fixed (SMI 2, NMI 4, ExtINT 7), vectors below 32 */
	guest_enabled(3);
	wr(0x852, EILVT_MASKED | DFR_VECTOR);
	CHECK_EQ(decide(3, &vector), SMCA_DFR_MASKED);
	wr(0x852, 0x200 | DFR_VECTOR);
	CHECK_EQ(decide(3, &vector), SMCA_DFR_NOT_FIXED);
	wr(0x852, 0x400 | DFR_VECTOR);
	CHECK_EQ(decide(3, &vector), SMCA_DFR_NOT_FIXED);
	wr(0x852, 0x700 | DFR_VECTOR);
	CHECK_EQ(decide(3, &vector), SMCA_DFR_NOT_FIXED);
	wr(0x852, 0);
	CHECK_EQ(decide(3, &vector), SMCA_DFR_BAD_VECTOR);
	wr(0x852, 18);	/* #MC's own vector */
	CHECK_EQ(decide(3, &vector), SMCA_DFR_BAD_VECTOR);
	wr(0x852, 31);
	CHECK_EQ(decide(3, &vector), SMCA_DFR_BAD_VECTOR);
	wr(0x852, 32);
	CHECK_EQ(decide(3, &vector), SMCA_DFR_INTERRUPT);
	CHECK_EQ(vector, 32);
	wr(0x852, 0xff);
	CHECK_EQ(decide(3, &vector), SMCA_DFR_INTERRUPT);
	CHECK_EQ(vector, 0xff);
	/* a power-on guest that enabled nothing: the poll */
	setup();
	CHECK_EQ(decide(3, &vector), SMCA_DFR_BANK_NOT_APIC);
	CHECK_EQ(fake.stray, 0);

	/* the reasons: "interrupt", or "poll: " and why, each its own, fit for a JSON string */
	CHECK(!strcmp(smca_dfr_reason(SMCA_DFR_INTERRUPT), "interrupt"), "%s",
	      smca_dfr_reason(SMCA_DFR_INTERRUPT));
	for (i = 0; i < sizeof(polls) / sizeof(polls[0]); i++) {
		const char *r = smca_dfr_reason(polls[i]);

		CHECK(!strncmp(r, "poll: ", 6), "reason %u: %s", polls[i], r);
		CHECK(strstr(r, why[i]) != NULL, "reason %u says '%s': %s", polls[i], why[i], r);
		CHECK(!strpbrk(r, "\"\\\n"), "reason %u is a plain JSON string: %s", polls[i], r);
		for (j = 0; j < i; j++)
			CHECK(strcmp(r, smca_dfr_reason(polls[j])),
			      "reasons %u and %u differ", polls[i], polls[j]);
	}
	CHECK(!strcmp(smca_dfr_reason((enum smca_dfr)99), "poll"), "an unknown decision: poll");
}

/* A vCPU with KVM's most banks (32): every SMCA bank is there, the last one legacy-backed. */
UNIT_TEST(smca_32_banks, "SMCA: 32 banks, each bank's registers, the deferred decision")
{
	uint8_t vector = 0;
	unsigned int bank;

	setup();
	smca_vcpu_reset(&s, HWLAB_MCE_MAX_BANKS);
	CHECK_EQ(s.nbanks, 32);
	for (bank = 0; bank < HWLAB_MCE_MAX_BANKS; bank++) {
		CHECK(rd(SMCA_MSR(bank, SMCA_IPID)) == SMCA_IPID_UMC(bank), "bank %u IPID", bank);
		CHECK(rd(SMCA_MSR(bank, SMCA_STATUS)) == fake.legacy[4 * bank + 1],
		      "bank %u STATUS is the legacy bank's", bank);
	}
	CHECK_EQ(rd(SMCA_MSR_END), GP);
	wr(SMCA_MSR(31, SMCA_CONFIG), 1ull << 37);
	wr(MSR_CU_DEF_ERR, 0x1020);
	wr(0x852, DFR_VECTOR);
	CHECK_EQ(smca_dfr_decide(&s, 31, &vector), SMCA_DFR_INTERRUPT);
	CHECK_EQ(vector, DFR_VECTOR);
	CHECK_EQ(smca_dfr_decide(&s, 32, &vector), SMCA_DFR_BANK_NOT_APIC);
	/* more than the arrays hold is clamped, never a bank past them */
	smca_vcpu_reset(&s, 64);
	CHECK_EQ(s.nbanks, HWLAB_MCE_MAX_BANKS);
	CHECK_EQ(fake.stray, 0);
}

/* The spread's pace: a batch read, then the guest idle or ten seconds gone by. */
UNIT_TEST(smca_spread_pace, "SMCA: the next batch of a lost huge page waits for the guest's work")
{
	/* still reading the last batch: never, whatever else */
	CHECK_EQ(smca_spread_batch_due(0, 1, SMCA_BATCH_BUSY_NS * 10), 0);
	CHECK_EQ(smca_spread_batch_due(0, 0, 0), 0);
	/* read, and the vCPU halted: its work queue ran dry */
	CHECK_EQ(smca_spread_batch_due(1, 1, 0), 1);
	/* read, still busy (in the handler that cleared the banks, or working) */
	CHECK_EQ(smca_spread_batch_due(1, 0, 0), 0);
	CHECK_EQ(smca_spread_batch_due(1, 0, SMCA_BATCH_BUSY_NS - 1), 0);
	/* a guest that never idles gets a batch every ten seconds */
	CHECK_EQ(smca_spread_batch_due(1, 0, SMCA_BATCH_BUSY_NS), 1);
	CHECK_EQ(SMCA_BATCH_BUSY_NS, 10000000000ull);
}

UNIT_TEST(smca_reset, "SMCA: vCPU reset restores the power-on registers")
{
	unsigned int bank, r;
	uint8_t vector;

	/* everything the guest can write, written */
	guest_enabled(0);
	for (bank = 0; bank < HWLAB_MCE_BANKS; bank++) {
		wr(SMCA_MSR(bank, SMCA_CONFIG), ~0ull);
		wr(SMCA_MSR(bank, SMCA_DESTAT), 0x9c00000000000000ull | bank);
		wr(SMCA_MSR(bank, SMCA_DEADDR), 0x7000ull | bank);
		for (r = SMCA_MISC1; r <= SMCA_MISC4; r++)
			wr(SMCA_MSR(bank, r), 0xc0000000ull + r);
	}
	wr(MSR_CU_DEF_ERR, 0x1030);
	for (r = 0; r < 4; r++)
		wr(0x850 + r, 0x40 + r);

	smca_vcpu_reset(&s, HWLAB_MCE_BANKS);
	for (bank = 0; bank < HWLAB_MCE_BANKS; bank++) {
		CHECK(rd(SMCA_MSR(bank, SMCA_CONFIG)) == SMCA_CONFIG_RO, "bank %u CONFIG", bank);
		CHECK(rd(SMCA_MSR(bank, SMCA_DESTAT)) == 0, "bank %u DESTAT", bank);
		CHECK(rd(SMCA_MSR(bank, SMCA_DEADDR)) == 0, "bank %u DEADDR", bank);
		for (r = SMCA_MISC1; r <= SMCA_MISC4; r++)
			CHECK(rd(SMCA_MSR(bank, r)) == 0, "bank %u MISC%u", bank,
			      r - SMCA_MISC1 + 1);
		CHECK(rd(SMCA_MSR(bank, SMCA_IPID)) == SMCA_IPID_UMC(bank), "bank %u IPID", bank);
	}
	CHECK_EQ(rd(MSR_CU_DEF_ERR), 0x1020);
	for (r = 0; r < 4; r++)
		CHECK(rd(0x850 + r) == 0x10000, "LVT %u masked", r);
	CHECK_EQ(decide(0, &vector), SMCA_DFR_BANK_NOT_APIC);

	/* from any state at all, not only the guest's writes */
	memset(&s, 0xa5, sizeof(s));
	smca_vcpu_reset(&s, HWLAB_MCE_BANKS);
	CHECK_EQ(rd(SMCA_MSR(LAST_BANK, SMCA_CONFIG)), SMCA_CONFIG_RO);
	CHECK_EQ(rd(SMCA_MSR(LAST_BANK, SMCA_MISC4)), 0);
	CHECK_EQ(rd(SMCA_MSR(0, SMCA_DEADDR)), 0);
	CHECK_EQ(rd(MSR_CU_DEF_ERR), 0x1020);
	CHECK_EQ(rd(0x853), 0x10000);
	CHECK_EQ(fake.stray, 0);
	/* no batch of the old guest's left being read or timed */
	CHECK_EQ(s.pace_read_ns, 0);
	CHECK_EQ(s.t_raised, 0);
}
