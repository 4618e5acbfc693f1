// SPDX-License-Identifier: GPL-2.0
#include "cpuid.h"

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
