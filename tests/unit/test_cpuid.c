// SPDX-License-Identifier: GPL-2.0
/*
 * The vCPU's XSAVE enumeration (cpuid_fix_xsave), on what KVM reported in
 * our outer VM (QEMU 7.2 TCG -cpu max, AMD; outer kernel 6.1 with kvm_amd),
 * measured 2026-12-06 with KVM_GET_SUPPORTED_CPUID. In that VM a nested
 * guest's XSETBV never reaches KVM: a vCPU that set XCR0 = 7 read it back
 * as 1 after its next exit, and KVM_GET_XCRS said 1.
 *
 * Each table is judged the way Linux 7.2 judges it at boot
 * (fpu__init_system_xstate, paranoid_xstate_size_valid): the components it
 * would enable, the size it computes for them from the sub-leaves, and the
 * size CPUID 0xD.0 EBX then reports (KVM's, for the XCR0 KVM holds).
 */
#include <stdlib.h>
#include <string.h>

#include "x86/cpuid.h"
#include "unit.h"

#define E(f, i, fl, a, b, c, d) { .function = f, .index = i, .flags = fl, \
				  .eax = a, .ebx = b, .ecx = c, .edx = d }

/* KVM_GET_SUPPORTED_CPUID in the outer VM, as KVM answered it */
static const struct kvm_cpuid_entry2 outer_vm_cpuid[] = {
	E(0x00000000, 0, 0, 0x0000000d, 0x68747541, 0x444d4163, 0x69746e65),
	E(0x00000001, 0, 0, 0x00060fb1, 0x00020800, 0x76f83203, 0x0f8bfbfd),
	E(0x00000002, 0, 0, 0, 0, 0, 0),
	E(0x00000003, 0, 0, 0, 0, 0, 0),
	E(0x00000004, 0, 1, 0, 0, 0, 0),
	E(0x00000005, 0, 0, 0, 0, 0, 0),
	E(0x00000006, 0, 0, 0x00000004, 0, 0, 0),
	E(0x00000007, 0, 1, 0, 0x019803ab, 0x00010204, 0x20000000),
	E(0x00000008, 0, 0, 0, 0, 0, 0),
	E(0x00000009, 0, 0, 0, 0, 0, 0),
	E(0x0000000a, 0, 0, 0, 0, 0, 0),
	E(0x0000000b, 0, 1, 0, 0, 0, 0),
	E(0x0000000c, 0, 0, 0, 0, 0, 0),
	E(0x0000000d, 0, 1, 0x00000207, 0x00000a88, 0x00000a88, 0),
	E(0x0000000d, 1, 1, 0x00000005, 0, 0, 0),
	E(0x0000000d, 2, 1, 0x00000100, 0x00000240, 0, 0),
	E(0x0000000d, 9, 1, 0x00000008, 0x00000a80, 0, 0),
	E(0x80000000, 0, 0, 0x8000000a, 0x68747541, 0x444d4163, 0x69746e65),
	E(0x80000001, 0, 0, 0x00060fb1, 0, 0x00000077, 0xedd3fbfd),
	E(0x80000002, 0, 0, 0, 0, 0, 0),
	E(0x80000003, 0, 0, 0, 0, 0, 0),
	E(0x80000004, 0, 0, 0, 0, 0, 0),
	E(0x80000005, 0, 0, 0, 0, 0, 0),
	E(0x80000006, 0, 0, 0, 0x42004200, 0x02008140, 0x00808140),
	E(0x80000007, 0, 0, 0, 0x00000002, 0, 0),
	E(0x80000008, 0, 0, 0x00003928, 0x04000000, 0x00001001, 0),
	E(0x80000009, 0, 0, 0, 0, 0, 0),
	E(0x8000000a, 0, 0, 0x00000001, 0x00000008, 0, 0x10010021),
	E(0x40000000, 0, 0, 0x40000001, 0x4b4d564b, 0x564b4d56, 0x0000004d),
	E(0x40000001, 0, 0, 0x01007efb, 0, 0, 0),
};
#define OUTER_NENT (sizeof(outer_vm_cpuid) / sizeof(outer_vm_cpuid[0]))

static struct kvm_cpuid2 *table(const struct kvm_cpuid_entry2 *e, unsigned int n)
{
	struct kvm_cpuid2 *c = calloc(1, sizeof(*c) + (n + 4) * sizeof(c->entries[0]));

	c->nent = n;
	memcpy(c->entries, e, n * sizeof(*e));
	return c;
}

static struct kvm_cpuid_entry2 *find(struct kvm_cpuid2 *c, unsigned int f, unsigned int i)
{
	unsigned int k;

	for (k = 0; k < c->nent; k++)
		if (c->entries[k].function == f && c->entries[k].index == i)
			return &c->entries[k];
	return NULL;
}

static unsigned int reg(struct kvm_cpuid2 *c, unsigned int f, unsigned int i, int r)
{
	struct kvm_cpuid_entry2 *e = find(c, f, i);

	if (!e)
		return 0;	/* KVM answers zeros for a leaf it was not given */
	return r == 0 ? e->eax : r == 1 ? e->ebx : r == 2 ? e->ecx : e->edx;
}

/* the size KVM's xstate_required_size() gives XCR0 (standard format) */
static unsigned int kvm_ebx(struct kvm_cpuid2 *c, unsigned long long xcr0)
{
	unsigned int size = XSAVE_LEGACY_AND_HEADER, i;

	for (i = 2; i < 64; i++)
		if ((xcr0 & (1ULL << i)) && reg(c, 0xd, i, 1) + reg(c, 0xd, i, 0) > size)
			size = reg(c, 0xd, i, 1) + reg(c, 0xd, i, 0);
	return size;
}

/*
 * Linux 7.2's boot-time check: 0 when the guest would use XSAVE with the
 * sizes agreeing, or not use XSAVE at all; else -1 with the two sizes of
 * its "XSAVE consistency problem: size %u != kernel_size %u".
 */
static int linux_xsave_check(struct kvm_cpuid2 *c, int xsetbv_exits, unsigned int *size,
			     unsigned int *kernel_size)
{
	unsigned long long max, xcr0_kvm;
	unsigned int top = 1, i;

	*size = *kernel_size = 0;
	if (!(reg(c, 1, 0, 2) & CPUID_1_ECX_XSAVE))
		return 0;	/* FXSAVE: nothing to disagree */
	max = reg(c, 0xd, 0, 0) | (unsigned long long)reg(c, 0xd, 0, 3) << 32;
	/* xsave_cpuid_features[]: a component whose feature is absent is not enabled */
	if (!(reg(c, 1, 0, 2) & CPUID_1_ECX_AVX))
		max &= ~XFEATURE_MASK_YMM;
	if (!(reg(c, 7, 0, 1) & CPUID_7_0_EBX_MPX))
		max &= ~XFEATURE_MASK_MPX;
	if (!(reg(c, 7, 0, 1) & CPUID_7_0_EBX_AVX512F))
		max &= ~XFEATURE_MASK_AVX512;
	/* PKRU needs OSPKE, which Linux sets only after its FPU is set up */
	max &= ~XFEATURE_MASK_PKRU;
	max &= XFEATURE_MASK_FPSSE | XFEATURE_MASK_YMM | XFEATURE_MASK_MPX |
	       XFEATURE_MASK_AVX512 | XFEATURE_MASK_XTILE;
	for (i = 2; i < 64; i++)
		if (max & (1ULL << i))
			top = i;
	*size = top <= 1 ? XSAVE_LEGACY_AND_HEADER : reg(c, 0xd, top, 1) + reg(c, 0xd, top, 0);
	/* xsetbv(max): KVM holds it only if the XSETBV reached KVM */
	xcr0_kvm = xsetbv_exits ? max : 1;
	*kernel_size = kvm_ebx(c, xcr0_kvm);
	return *size == *kernel_size ? 0 : -1;
}

/* every component 0xD.0 offers has its feature, its sub-leaf, and fits ECX */
static int xsave_enumeration_consistent(struct kvm_cpuid2 *c)
{
	unsigned long long comp = reg(c, 0xd, 0, 0) | (unsigned long long)reg(c, 0xd, 0, 3) << 32;
	unsigned int i;

	if (!(reg(c, 1, 0, 2) & CPUID_1_ECX_XSAVE))
		return !find(c, 0xd, 0) && !(reg(c, 1, 0, 2) & CPUID_1_ECX_AVX) &&
		       !(reg(c, 7, 0, 1) & CPUID_7_0_EBX_AVX2);
	if ((comp & XFEATURE_MASK_PKRU) && !(reg(c, 7, 0, 2) & CPUID_7_0_ECX_PKU))
		return 0;
	if ((comp & XFEATURE_MASK_MPX) && !(reg(c, 7, 0, 1) & CPUID_7_0_EBX_MPX))
		return 0;
	if (!!(comp & XFEATURE_MASK_YMM) != !!(reg(c, 1, 0, 2) & CPUID_1_ECX_AVX))
		return 0;
	for (i = 2; i < 64; i++)
		if ((comp & (1ULL << i)) && !reg(c, 0xd, i, 0))
			return 0;
	for (i = 2; i < 64; i++)
		if (!(comp & (1ULL << i)) && find(c, 0xd, i))
			return 0;
	return reg(c, 0xd, 0, 2) == kvm_ebx(c, comp);
}

/* the outer VM as it is: XSETBV does not exit, so no XSAVE */
static void test_outer_vm_no_xsetbv_exit(void)
{
	struct kvm_cpuid2 *raw = table(outer_vm_cpuid, OUTER_NENT);
	struct kvm_cpuid2 *c = table(outer_vm_cpuid, OUTER_NENT);
	unsigned int size, kernel_size, i;

	/* what hwlab-vmm gave the vCPU before: Linux 7.2's exact complaint */
	CHECK_EQ(linux_xsave_check(raw, 0, &size, &kernel_size), -1);
	CHECK_EQ(size, 832);
	CHECK_EQ(kernel_size, 576);
	CHECK(!xsave_enumeration_consistent(raw), "PKRU offered without PKU");

	CHECK_EQ(cpuid_fix_xsave(c, 0), 0);
	CHECK_EQ(linux_xsave_check(c, 0, &size, &kernel_size), 0);
	CHECK(xsave_enumeration_consistent(c), "after the fix");
	CHECK_EQ(reg(c, 1, 0, 2), 0x76f83203U & ~(CPUID_1_ECX_XSAVE | CPUID_1_ECX_OSXSAVE |
		 CPUID_1_ECX_AVX | CPUID_1_ECX_FMA | CPUID_1_ECX_F16C));
	CHECK_EQ(reg(c, 7, 0, 1), 0x019803abU & ~CPUID_7_0_EBX_AVX2);
	CHECK_EQ(reg(c, 7, 0, 2), 0x00010204U & ~(CPUID_7_0_ECX_VAES | CPUID_7_0_ECX_VPCLMULQDQ));
	CHECK_EQ(c->nent, OUTER_NENT - 4);
	for (i = 0; i < c->nent; i++)
		CHECK(c->entries[i].function != 0xd, "leaf 0xd.%u left", c->entries[i].index);
	/* nothing else touched: SSE, the vendor, the extended leaves */
	CHECK_EQ(reg(c, 1, 0, 3), 0x0f8bfbfd);
	CHECK_EQ(reg(c, 0, 0, 1), 0x68747541);
	CHECK_EQ(reg(c, 0x80000001, 0, 2), 0x77);
	CHECK_EQ(reg(c, 0x80000007, 0, 1), 2);
	CHECK_EQ(reg(c, 0x80000008, 0, 0), 0x3928);
	free(raw);
	free(c);
}

/* the same KVM where XSETBV does exit: XSAVE stays, without PKRU */
static void test_outer_vm_xsetbv_exits(void)
{
	struct kvm_cpuid2 *raw = table(outer_vm_cpuid, OUTER_NENT);
	struct kvm_cpuid2 *c = table(outer_vm_cpuid, OUTER_NENT);
	unsigned int size, kernel_size;

	/* sizes agree there, but 0xD.0 lists PKRU (0x200) with PKU absent from leaf 7 */
	CHECK_EQ(linux_xsave_check(raw, 1, &size, &kernel_size), 0);
	CHECK(!xsave_enumeration_consistent(raw), "PKRU offered without PKU");

	CHECK_EQ(cpuid_fix_xsave(c, 1), 0x7);
	CHECK(xsave_enumeration_consistent(c), "after the fix");
	CHECK_EQ(linux_xsave_check(c, 1, &size, &kernel_size), 0);
	CHECK_EQ(size, 832);
	CHECK_EQ(reg(c, 0xd, 0, 0), 0x7);
	CHECK_EQ(reg(c, 0xd, 0, 1), 576);
	CHECK_EQ(reg(c, 0xd, 0, 2), 832);
	CHECK(find(c, 0xd, 9) == NULL, "PKRU's sub-leaf dropped");
	CHECK_EQ(reg(c, 0xd, 2, 0), 256);
	CHECK_EQ(reg(c, 0xd, 2, 1), 576);
	CHECK_EQ(reg(c, 0xd, 1, 0), 5);
	CHECK(reg(c, 1, 0, 2) & CPUID_1_ECX_AVX, "AVX kept");
	CHECK(reg(c, 1, 0, 2) & CPUID_1_ECX_XSAVE, "XSAVE kept");
	CHECK_EQ(c->nent, OUTER_NENT - 1);
	free(raw);
	free(c);
}

/* a CPU that has PKU keeps PKRU; one whose 0xD.0 lists a component without a sub-leaf does not */
static void test_synthetic(void)
{
	struct kvm_cpuid2 *c = table(outer_vm_cpuid, OUTER_NENT);
	struct kvm_cpuid_entry2 *d0;

	find(c, 7, 0)->ecx |= CPUID_7_0_ECX_PKU;
	CHECK_EQ(cpuid_fix_xsave(c, 1), 0x207);
	CHECK_EQ(reg(c, 0xd, 0, 2), 0xa88);
	CHECK(xsave_enumeration_consistent(c), "with PKU");
	free(c);

	/* MPX in 0xD.0 and leaf 7, but KVM gave no sub-leaves for it */
	c = table(outer_vm_cpuid, OUTER_NENT);
	d0 = find(c, 0xd, 0);
	d0->eax |= XFEATURE_MASK_MPX;
	find(c, 7, 0)->ebx |= CPUID_7_0_EBX_MPX;
	CHECK_EQ(cpuid_fix_xsave(c, 1), 0x7);
	CHECK(!(reg(c, 7, 0, 1) & CPUID_7_0_EBX_MPX), "MPX dropped with its state");
	CHECK(xsave_enumeration_consistent(c), "MPX dropped");
	free(c);

	/* no AVX in leaf 1: YMM goes, and with it the AVX2 of leaf 7 */
	c = table(outer_vm_cpuid, OUTER_NENT);
	find(c, 1, 0)->ecx &= ~CPUID_1_ECX_AVX;
	CHECK_EQ(cpuid_fix_xsave(c, 1), 0x3);
	CHECK_EQ(reg(c, 0xd, 0, 2), 576);
	CHECK(find(c, 0xd, 2) == NULL, "YMM's sub-leaf dropped");
	CHECK(!(reg(c, 7, 0, 1) & CPUID_7_0_EBX_AVX2), "AVX2 dropped");
	CHECK(xsave_enumeration_consistent(c), "no AVX");
	free(c);

	/* no leaf 0xD at all, XSAVE in leaf 1: XSAVE goes */
	c = table(outer_vm_cpuid, 13);
	CHECK_EQ(cpuid_fix_xsave(c, 1), 0);
	CHECK(!(reg(c, 1, 0, 2) & CPUID_1_ECX_XSAVE), "XSAVE without leaf 0xd dropped");
	CHECK_EQ(c->nent, 13);
	free(c);
}

UNIT_TEST(cpuid_xsave, "CPUID: XSAVE as the vCPU can enable it (outer VM's KVM)")
{
	test_outer_vm_no_xsetbv_exit();
	test_outer_vm_xsetbv_exits();
	test_synthetic();
}

/* KVM's table without one leaf: as a KVM that does not report it would give it */
static struct kvm_cpuid2 *table_without(unsigned int function)
{
	struct kvm_cpuid2 *c = table(outer_vm_cpuid, OUTER_NENT);
	unsigned int k, n = 0;

	for (k = 0; k < c->nent; k++)
		if (c->entries[k].function != function)
			c->entries[n++] = c->entries[k];
	c->nent = n;
	return c;
}

static int same_table(const struct kvm_cpuid2 *a, const struct kvm_cpuid2 *b)
{
	return a->nent == b->nent &&
	       !memcmp(a->entries, b->entries, a->nent * sizeof(a->entries[0]));
}

/* whether c is the outer VM's table with bits set in leaf f's EBX (r 1) or ECX (r 2) */
static int only_bits_added(struct kvm_cpuid2 *c, unsigned int f, int r, unsigned int bits)
{
	struct kvm_cpuid2 *raw = table(outer_vm_cpuid, OUTER_NENT);
	unsigned int k;
	int same;

	for (k = 0; k < raw->nent; k++) {
		struct kvm_cpuid_entry2 *e = &raw->entries[k];

		if (e->function != f || e->index != 0)
			continue;
		if (r == 1)
			e->ebx |= bits;
		else if (r == 2)
			e->ecx |= bits;
	}
	same = same_table(c, raw);
	free(raw);
	return same;
}

/* a refusal leaves KVM's table as it was */
static int unchanged_without(struct kvm_cpuid2 *c, unsigned int function)
{
	struct kvm_cpuid2 *raw = table_without(function);
	int same = same_table(c, raw);

	free(raw);
	return same;
}

UNIT_TEST(cpuid_hypervisor_smca, "CPUID: the hypervisor bit and the SMCA bit")
{
	struct kvm_cpuid2 *c = table(outer_vm_cpuid, OUTER_NENT);

	/* leaf 1 ECX bit 31, which KVM leaves clear, and nothing else */
	CHECK_EQ(reg(c, 1, 0, 2) & (1U << 31), 0);
	CHECK_EQ(cpuid_set_hypervisor(c), 0);
	CHECK_EQ(reg(c, 1, 0, 2), 0x76f83203U | (1U << 31));
	CHECK(only_bits_added(c, 1, 2, 1U << 31), "only leaf 1 ECX bit 31 changed");
	free(c);
	/* no leaf 1 to set it in: refused, the table as it was */
	c = table_without(1);
	CHECK_EQ(cpuid_set_hypervisor(c), -1);
	CHECK(unchanged_without(c, 1), "the table without leaf 1 left as it was");
	free(c);

	/* 0x80000007 EBX bit 3 (SMCA) beside what KVM gave (bit 1, SUCCOR), and nothing else */
	c = table(outer_vm_cpuid, OUTER_NENT);
	CHECK_EQ(cpuid_set_smca(c), 0);
	CHECK_EQ(reg(c, 0x80000007, 0, 1), 0x2 | (1U << 3));
	CHECK(only_bits_added(c, 0x80000007, 1, 1U << 3), "only 0x80000007 EBX bit 3 changed");
	free(c);
	c = table_without(0x80000007);
	CHECK_EQ(cpuid_set_smca(c), -1);
	CHECK(unchanged_without(c, 0x80000007), "the table without 0x80000007 left as it was");
	free(c);
}
