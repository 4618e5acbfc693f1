// SPDX-License-Identifier: GPL-2.0
#include "x86/cpuid.h"

#include <stdlib.h>
#include <string.h>

enum cpu_vendor cpuid_vendor(const struct kvm_cpuid2 *c)
{
	unsigned int i;

	for (i = 0; i < c->nent; i++) {
		const struct kvm_cpuid_entry2 *e = &c->entries[i];
		char id[13];

		if (e->function != 0)
			continue;
		memcpy(id, &e->ebx, 4);
		memcpy(id + 4, &e->edx, 4);
		memcpy(id + 8, &e->ecx, 4);
		id[12] = 0;
		if (!strcmp(id, "GenuineIntel"))
			return CPU_VENDOR_INTEL;
		if (!strcmp(id, "AuthenticAMD") || !strcmp(id, "HygonGenuine"))
			return CPU_VENDOR_AMD;
		break;
	}
	return CPU_VENDOR_OTHER;
}

const char *cpuid_vendor_name(enum cpu_vendor v)
{
	switch (v) {
	case CPU_VENDOR_INTEL:
		return "intel";
	case CPU_VENDOR_AMD:
		return "amd";
	case CPU_VENDOR_OTHER:
		break;
	}
	return "other";
}

struct kvm_cpuid_entry2 *cpuid_find(struct kvm_cpuid2 *c, unsigned int function,
				    unsigned int index)
{
	unsigned int i;

	for (i = 0; i < c->nent; i++) {
		struct kvm_cpuid_entry2 *e = &c->entries[i];

		if (e->function == function &&
		    (!(e->flags & KVM_CPUID_FLAG_SIGNIFCANT_INDEX) || e->index == index))
			return e;
	}
	return NULL;
}

int cpuid_mca_broadcast(const struct kvm_cpuid2 *c)
{
	const struct kvm_cpuid_entry2 *leaf1 = cpuid_find((struct kvm_cpuid2 *)c, 1, 0);
	unsigned int family, model;

	if (!leaf1)
		return 0;
	/* as QEMU's cpu_x86_version(): the base family, the extended model */
	family = (leaf1->eax >> 8) & 0xf;
	model = ((leaf1->eax >> 12) & 0xf0) | ((leaf1->eax >> 4) & 0xf);
	return (family == 6 && model >= 14) || family > 6;
}

int cpuid_set_mca_recovery(struct kvm_cpuid2 *c)
{
	struct kvm_cpuid_entry2 *max = cpuid_find(c, 0x80000000, 0);
	struct kvm_cpuid_entry2 *ras = cpuid_find(c, 0x80000007, 0);

	if (!max || !ras)
		return -1;
	if (max->eax < 0x80000007)
		max->eax = 0x80000007;
	ras->ebx |= CPUID_8000_0007_EBX_SUCCOR | CPUID_8000_0007_EBX_OVERFLOW_RECOV;
	return 0;
}

int cpuid_set_hypervisor(struct kvm_cpuid2 *c)
{
	struct kvm_cpuid_entry2 *leaf1 = cpuid_find(c, 1, 0);

	if (!leaf1)
		return -1;
	leaf1->ecx |= CPUID_1_ECX_HYPERVISOR;
	return 0;
}

int cpuid_set_smca(struct kvm_cpuid2 *c)
{
	struct kvm_cpuid_entry2 *ras = cpuid_find(c, 0x80000007, 0);

	if (!ras)
		return -1;
	ras->ebx |= CPUID_8000_0007_EBX_SMCA;
	return 0;
}

struct kvm_cpuid2 *cpuid_for_vcpu(const struct kvm_cpuid2 *c, unsigned int id)
{
	size_t size = sizeof(*c) + c->nent * sizeof(c->entries[0]);
	struct kvm_cpuid2 *v = malloc(size);
	unsigned int i;

	if (!v)
		return NULL;
	memcpy(v, c, size);
	for (i = 0; i < v->nent; i++) {
		struct kvm_cpuid_entry2 *e = &v->entries[i];

		if (e->function == 1)
			e->ebx = (e->ebx & 0x00ffffff) | (id << 24);
		else if (e->function == 0xb || e->function == 0x1f)
			e->edx = id;
	}
	return v;
}

/* Remove the entries of function (all its indices) for which drop() says so. */
static void remove_entries(struct kvm_cpuid2 *c, unsigned int function,
			   int (*drop)(const struct kvm_cpuid_entry2 *e, unsigned long long keep),
			   unsigned long long keep)
{
	unsigned int i, n = 0;

	for (i = 0; i < c->nent; i++) {
		const struct kvm_cpuid_entry2 *e = &c->entries[i];

		if (e->function == function && drop(e, keep))
			continue;
		c->entries[n++] = *e;
	}
	c->nent = n;
}

static int any(const struct kvm_cpuid_entry2 *e, unsigned long long keep)
{
	(void)e;
	(void)keep;
	return 1;
}

/* a component's sub-leaf (2..63) that is no longer enabled */
static int dropped_component(const struct kvm_cpuid_entry2 *e, unsigned long long keep)
{
	return e->index >= 2 && e->index < 64 && !(keep & (1ULL << e->index));
}

static void clear_bits(struct kvm_cpuid2 *c, unsigned int function, unsigned int index,
		       int reg, unsigned int bits)
{
	struct kvm_cpuid_entry2 *e = cpuid_find(c, function, index);

	if (!e || (function == 7 && e->index != index))
		return;
	switch (reg) {
	case 0: e->eax &= ~bits; break;
	case 1: e->ebx &= ~bits; break;
	case 2: e->ecx &= ~bits; break;
	case 3: e->edx &= ~bits; break;
	}
}

static int has_bit(struct kvm_cpuid2 *c, unsigned int function, unsigned int index, int reg,
		   unsigned int bit)
{
	struct kvm_cpuid_entry2 *e = cpuid_find(c, function, index);
	unsigned int v;

	if (!e || (function == 7 && e->index != index))
		return 0;
	v = reg == 0 ? e->eax : reg == 1 ? e->ebx : reg == 2 ? e->ecx : e->edx;
	return !!(v & bit);
}

enum { EAX, EBX, ECX, EDX };

unsigned long long cpuid_fix_xsave(struct kvm_cpuid2 *c, int xsetbv_exits)
{
	struct kvm_cpuid_entry2 *d0 = cpuid_find(c, 0xd, 0);
	unsigned long long xcr0 = 0;
	unsigned int i, size;

	if (d0 && has_bit(c, 1, 0, ECX, CPUID_1_ECX_XSAVE) && xsetbv_exits)
		xcr0 = d0->eax | (unsigned long long)d0->edx << 32;
	/* x87 and SSE are not optional: without both, no XSAVE (SDM 13.3) */
	if ((xcr0 & XFEATURE_MASK_FPSSE) != XFEATURE_MASK_FPSSE)
		xcr0 = 0;
	/* a component whose feature is not offered: nothing would enable it */
	if (!has_bit(c, 1, 0, ECX, CPUID_1_ECX_AVX))
		xcr0 &= ~XFEATURE_MASK_YMM;
	if (!has_bit(c, 7, 0, EBX, CPUID_7_0_EBX_MPX))
		xcr0 &= ~XFEATURE_MASK_MPX;
	if (!has_bit(c, 7, 0, EBX, CPUID_7_0_EBX_AVX512F))
		xcr0 &= ~XFEATURE_MASK_AVX512;
	if (!has_bit(c, 7, 0, ECX, CPUID_7_0_ECX_PKU))
		xcr0 &= ~XFEATURE_MASK_PKRU;
	if (!has_bit(c, 7, 0, EDX, CPUID_7_0_EDX_AMX_TILE))
		xcr0 &= ~XFEATURE_MASK_XTILE;
	/* groups that XCR0 enables together or not at all (XSETBV's #GP rules) */
	if ((xcr0 & XFEATURE_MASK_MPX) != XFEATURE_MASK_MPX)
		xcr0 &= ~XFEATURE_MASK_MPX;
	if ((xcr0 & XFEATURE_MASK_AVX512) != XFEATURE_MASK_AVX512 || !(xcr0 & XFEATURE_MASK_YMM))
		xcr0 &= ~XFEATURE_MASK_AVX512;
	if ((xcr0 & XFEATURE_MASK_XTILE) != XFEATURE_MASK_XTILE)
		xcr0 &= ~XFEATURE_MASK_XTILE;
	/* a component without a sub-leaf of non-zero size: its place is unknown */
	for (i = 2; i < 64; i++) {
		struct kvm_cpuid_entry2 *e;

		if (!(xcr0 & (1ULL << i)))
			continue;
		e = cpuid_find(c, 0xd, i);
		if (!e || e->index != i || !e->eax)
			xcr0 &= ~(1ULL << i);
	}
	/* ... and only the known user components: anything else Linux refuses */
	xcr0 &= XFEATURE_MASK_FPSSE | XFEATURE_MASK_YMM | XFEATURE_MASK_MPX |
		XFEATURE_MASK_AVX512 | XFEATURE_MASK_PKRU | XFEATURE_MASK_XTILE;

	/* features whose state XCR0 cannot hold */
	if (!(xcr0 & XFEATURE_MASK_YMM)) {
		clear_bits(c, 1, 0, ECX, CPUID_1_ECX_AVX | CPUID_1_ECX_FMA | CPUID_1_ECX_F16C);
		clear_bits(c, 7, 0, EBX, CPUID_7_0_EBX_AVX2);
		clear_bits(c, 7, 0, ECX, CPUID_7_0_ECX_VAES | CPUID_7_0_ECX_VPCLMULQDQ);
		clear_bits(c, 7, 1, EAX, CPUID_7_1_EAX_AVX_VNNI);
	}
	if (!(xcr0 & XFEATURE_MASK_MPX))
		clear_bits(c, 7, 0, EBX, CPUID_7_0_EBX_MPX);
	if (!(xcr0 & XFEATURE_MASK_AVX512)) {
		clear_bits(c, 7, 0, EBX, CPUID_7_0_EBX_AVX512_ALL);
		clear_bits(c, 7, 0, ECX, CPUID_7_0_ECX_AVX512_VBMI | CPUID_7_0_ECX_AVX512_MORE);
		clear_bits(c, 7, 0, EDX, CPUID_7_0_EDX_AVX512_MORE);
		clear_bits(c, 7, 1, EAX, CPUID_7_1_EAX_AVX512_BF16);
	}
	if (!(xcr0 & XFEATURE_MASK_PKRU))
		clear_bits(c, 7, 0, ECX, CPUID_7_0_ECX_PKU | CPUID_7_0_ECX_OSPKE);
	if (!(xcr0 & XFEATURE_MASK_XTILE))
		clear_bits(c, 7, 0, EDX, CPUID_7_0_EDX_AMX);

	if (!xcr0) {
		/* no XSAVE at all: FXSAVE it is, and leaf 0xD reads zeros */
		clear_bits(c, 1, 0, ECX, CPUID_1_ECX_XSAVE | CPUID_1_ECX_OSXSAVE);
		remove_entries(c, 0xd, any, 0);
		return 0;
	}
	remove_entries(c, 0xd, dropped_component, xcr0);
	/* ECX: the area for every component kept; EBX: for XCR0 = x87, as at power-on */
	size = XSAVE_LEGACY_AND_HEADER;
	for (i = 2; i < 64; i++) {
		struct kvm_cpuid_entry2 *e = cpuid_find(c, 0xd, i);

		if ((xcr0 & (1ULL << i)) && e && e->ebx + e->eax > size)
			size = e->ebx + e->eax;
	}
	d0 = cpuid_find(c, 0xd, 0);
	d0->eax = (unsigned int)xcr0;
	d0->edx = (unsigned int)(xcr0 >> 32);
	d0->ebx = XSAVE_LEGACY_AND_HEADER;
	d0->ecx = size;
	return xcr0;
}
