/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The CPUID a vCPU gets: what KVM_GET_SUPPORTED_CPUID offers, with the
 * vCPU's own APIC id, and on AMD the machine-check recovery bits that make
 * a Linux guest recover instead of panic (SUCCOR, OVERFLOW_RECOV): KVM
 * emulates the banks, so what they promise is KVM's to keep, not the host
 * CPU's. QEMU adds the same two bits (target/i386/kvm/kvm.c).
 */
#ifndef HWLAB_CPUID_H
#define HWLAB_CPUID_H

#include <linux/kvm.h>

enum cpu_vendor { CPU_VENDOR_INTEL, CPU_VENDOR_AMD, CPU_VENDOR_OTHER };

/* CPUID 0x80000007 EBX (AMD APM vol. 3, "RAS capabilities") */
#define CPUID_8000_0007_EBX_OVERFLOW_RECOV	(1U << 0)
#define CPUID_8000_0007_EBX_SUCCOR		(1U << 1)

/* The vendor of leaf 0: AuthenticAMD and HygonGenuine count as AMD. */
enum cpu_vendor cpuid_vendor(const struct kvm_cpuid2 *c);
const char *cpuid_vendor_name(enum cpu_vendor v);
/* The entry for function/index, or NULL. */
struct kvm_cpuid_entry2 *cpuid_find(struct kvm_cpuid2 *c, unsigned int function,
				    unsigned int index);
/*
 * Set SUCCOR and OVERFLOW_RECOV in leaf 0x80000007, raising the maximum
 * extended leaf if needed (the entry must exist). Returns 0, or -1 if
 * KVM's table has no 0x80000007 entry to set.
 */
int cpuid_set_mca_recovery(struct kvm_cpuid2 *c);
/*
 * Whether a CPU with this leaf 1 signals a machine check on every CPU (MCA
 * broadcast): QEMU's cpu_x86_support_mca_broadcast(), family 6 from model
 * 14 (Core) on, and any later family. Vendor-blind, as QEMU's is: the
 * caller decides for which encodings it applies. Pure.
 */
int cpuid_mca_broadcast(const struct kvm_cpuid2 *c);
/*
 * A copy of c for vCPU id: its initial APIC id in leaf 1 EBX[31:24] and
 * the x2APIC id of leaves 0xb/0x1f (the MP table names it by this id).
 * Caller frees; NULL if out of memory.
 */
struct kvm_cpuid2 *cpuid_for_vcpu(const struct kvm_cpuid2 *c, unsigned int id);

#endif
