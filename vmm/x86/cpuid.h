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
#define CPUID_8000_0007_EBX_SMCA		(1U << 3)

/*
 * XSAVE (SDM vol. 1 ch. 13): CPUID 0xD sub-leaf 0 EDX:EAX lists the state
 * components XCR0 may enable, EBX the XSAVE area's size for the XCR0 of
 * now (KVM recomputes it), ECX its size with all of them; sub-leaf i >= 2
 * gives component i's size (EAX) and offset (EBX).
 */
#define CPUID_1_ECX_FMA			(1U << 12)
#define CPUID_1_ECX_HYPERVISOR		(1U << 31)
#define CPUID_1_ECX_XSAVE		(1U << 26)
#define CPUID_1_ECX_OSXSAVE		(1U << 27)
#define CPUID_1_ECX_AVX			(1U << 28)
#define CPUID_1_ECX_F16C		(1U << 29)
#define CPUID_7_0_EBX_AVX2		(1U << 5)
#define CPUID_7_0_EBX_MPX		(1U << 14)
#define CPUID_7_0_EBX_AVX512F		(1U << 16)
#define CPUID_7_0_EBX_AVX512_ALL	0xdc230000U	/* F DQ IFMA PF ER CD BW VL */
#define CPUID_7_0_ECX_AVX512_VBMI	(1U << 1)
#define CPUID_7_0_ECX_PKU		(1U << 3)
#define CPUID_7_0_ECX_OSPKE		(1U << 4)
#define CPUID_7_0_ECX_AVX512_MORE	0x00005840U	/* VBMI2 VNNI BITALG VPOPCNTDQ */
#define CPUID_7_0_ECX_VAES		(1U << 9)
#define CPUID_7_0_ECX_VPCLMULQDQ	(1U << 10)
#define CPUID_7_0_EDX_AVX512_MORE	0x0080010cU	/* 4VNNIW 4FMAPS VP2INTERSECT FP16 */
#define CPUID_7_0_EDX_AMX		0x01400000U	/* AMX-BF16 AMX-TILE AMX-INT8 */
#define CPUID_7_0_EDX_AMX_TILE		(1U << 24)
#define CPUID_7_1_EAX_AVX_VNNI		(1U << 4)
#define CPUID_7_1_EAX_AVX512_BF16	(1U << 5)

#define XFEATURE_MASK_FPSSE		0x3ULL
#define XFEATURE_MASK_YMM		(1ULL << 2)
#define XFEATURE_MASK_MPX		(3ULL << 3)
#define XFEATURE_MASK_AVX512		(7ULL << 5)
#define XFEATURE_MASK_PKRU		(1ULL << 9)
#define XFEATURE_MASK_XTILE		(3ULL << 17)
#define XSAVE_LEGACY_AND_HEADER		576	/* FXSAVE area 512 + header 64 */

/*
 * Make the vCPU's XSAVE enumeration one a guest can trust: the state
 * components 0xD.0 lists are exactly those whose features the other
 * leaves offer, each with a sub-leaf of non-zero size, EBX and ECX sized
 * for them; features whose state cannot be enabled are dropped (AVX and
 * what needs it without YMM, MPX without BNDREGS/BNDCSR, AVX-512 without
 * its three, PKU without PKRU, AMX without its tiles).
 *
 * xsetbv_exits: 0 when a guest's XSETBV does not reach KVM (under our outer
 * VM, QEMU TCG's SVM lets the nested guest's XSETBV run without a
 * #VMEXIT, and KVM puts its own XCR0 of 1 back at the next VM entry): then
 * XSAVE itself is dropped, with every 0xD sub-leaf, and the guest uses
 * FXSAVE. Otherwise its CPUID would promise state XCR0 never holds, and
 * CPUID 0xD.0 EBX (576, for KVM's XCR0 of 1) disagree with the size the
 * guest computes for the XCR0 it set (Linux: "XSAVE consistency problem",
 * which 7.2 does not survive).
 *
 * Pure: changes c in place (entries removed, nent smaller). Returns the
 * XCR0 components left (0 when XSAVE was dropped).
 */
unsigned long long cpuid_fix_xsave(struct kvm_cpuid2 *c, int xsetbv_exits);

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
 * Say "running under a hypervisor" (CPUID 1 ECX bit 31), as QEMU and
 * kvmtool do: KVM_GET_SUPPORTED_CPUID leaves it clear, and without it a
 * Linux guest never looks at KVM's own leaves (0x40000000 "KVMKVMKVM"), so
 * it takes itself for bare metal: no kvm-clock, no paravirtual EOI or IPIs,
 * and no x2APIC without interrupt remapping (kvm x2apic_available()).
 * Returns -1 if there is no leaf 1.
 */
int cpuid_set_hypervisor(struct kvm_cpuid2 *c);
/* Set SMCA (Scalable MCA) in leaf 0x80000007 EBX; -1 if there is no such entry. */
int cpuid_set_smca(struct kvm_cpuid2 *c);
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
