/* SPDX-License-Identifier: GPL-2.0 */
/*
 * x86 machine-check architecture (Intel SDM vol. 3B ch. 16, AMD APM vol. 2
 * ch. 9): the MSRs and bits the VMM writes into a vCPU and the guest reads
 * back. One definition for both sides of the contract; free of libc, so the
 * freestanding guest can include it.
 */
#ifndef HWLAB_X86_MCE_H
#define HWLAB_X86_MCE_H

#define X86_CR4_MCE		(1ULL << 6)
#define X86_MC_VECTOR		18

#define MSR_IA32_MCG_CAP	0x179
#define MSR_IA32_MCG_STATUS	0x17a
#define MSR_IA32_MCx_CTL(b)	(0x400 + 4 * (b))
#define MSR_IA32_MCx_STATUS(b)	(0x401 + 4 * (b))
#define MSR_IA32_MCx_ADDR(b)	(0x402 + 4 * (b))
#define MSR_IA32_MCx_MISC(b)	(0x403 + 4 * (b))

#define MCG_CAP_COUNT_MASK	0xffULL
#define MCG_CTL_P		(1ULL << 8)
#define MCG_SER_P		(1ULL << 24)

#define MCG_STATUS_RIPV		(1ULL << 0)
#define MCG_STATUS_EIPV		(1ULL << 1)
#define MCG_STATUS_MCIP		(1ULL << 2)

#define MCI_STATUS_VAL		(1ULL << 63)
#define MCI_STATUS_OVER		(1ULL << 62)
#define MCI_STATUS_UC		(1ULL << 61)
#define MCI_STATUS_EN		(1ULL << 60)
#define MCI_STATUS_MISCV	(1ULL << 59)
#define MCI_STATUS_ADDRV	(1ULL << 58)
#define MCI_STATUS_PCC		(1ULL << 57)
#define MCI_STATUS_S		(1ULL << 56)
#define MCI_STATUS_AR		(1ULL << 55)
/* AMD: a deferred error (found, not consumed), and poisoned data */
#define MCI_STATUS_DEFERRED	(1ULL << 44)
#define MCI_STATUS_POISON	(1ULL << 43)

/* MCi_MISC: the recoverable address LSB and the address mode. */
#define MCI_MISC_LSB_MASK	0x3fULL
#define MCI_MISC_ADDR_MODE(m)	(((m) >> 6) & 7)
#define MCI_MISC_ADDR_PHYS	2

/* SDM "memory scrubbing" (AO) and "data load" (AR) error codes. */
#define MCACOD_SCRUB		0x00c0
#define MCACOD_DATA_LOAD	0x0134

#endif
