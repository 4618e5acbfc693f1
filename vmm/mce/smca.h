/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A Scalable MCA (SMCA) view for AMD guests, and its deferred-error
 * interrupt.
 *
 * KVM never reports SMCA (it zeroes CPUID 0x80000007 EBX), so every KVM
 * guest is a non-SMCA AMD guest that hears of a deferred error (an AO) only
 * from its MCE poll, 300 s by default. A Linux guest enables the
 * deferred-error APIC interrupt only on an SMCA CPU (7.2: mca_bsp_init() ->
 * smca_bsp_init(); smca_enable_interrupt_vectors() reads MSR_CU_DEF_ERR for
 * the extended-LVT offset; smca_configure() puts a bank whose MCA_CONFIG
 * has DeferredIntTypeSupported into dfr_intr_banks). So hwlab-vmm offers
 * the guest what a Zen host has, emulated in userspace through KVM's MSR
 * exits:
 *
 * - CPUID 0x80000007 EBX bit 3 (SMCA), beside SUCCOR;
 * - the SMCA bank registers 0xC0002000 + 0x10 * bank. CTL, STATUS, ADDR and
 *   MISC0 are the legacy bank's (MSR_IA32_MCx_*), read and written through
 *   KVM_GET/SET_MSRS, so they are always what KVM_X86_SET_MCE injected;
 *   CONFIG, IPID, SYND*, DESTAT, DEADDR and MISC1-4 are kept here;
 * - MSR_CU_DEF_ERR (0xC0000410): the extended-LVT offsets (deferred 2,
 *   threshold 1, as Zen firmware sets them);
 * - the x2APIC extended LVT (APIC 0x500-0x530, MSRs 0x850-0x853), which
 *   KVM's in-kernel LAPIC does not implement (it refuses them, and with
 *   KVM_MSR_EXIT_REASON_INVAL the access comes here). In xAPIC mode the
 *   registers are MMIO inside KVM, which reads them as garbage and drops
 *   writes: Linux's setup_APIC_eilvt() then refuses the offset (FW_BUG
 *   "already in use") and the guest polls, as today.
 *
 * When the VMM writes a deferred error into a bank whose MCA_CONFIG says
 * DeferredIntType APIC, and the guest programmed the deferred LVT entry
 * (unmasked, fixed delivery, a vector >= 32), the VMM raises that vector on
 * the vCPU (KVM_SIGNAL_MSI to its APIC ID): once per batch of banks.
 * Anything else is the poll, as without SMCA.
 *
 * This file is pure (no KVM, no VM): the MSR semantics and the decision,
 * for the host unit tests. smca_kvm.c is the glue.
 */
#ifndef HWLAB_SMCA_H
#define HWLAB_SMCA_H

#include <stdint.h>

#include "mce/mce.h"

#define SMCA_MSR_BASE		0xc0002000u
#define SMCA_MSR_STRIDE		0x10u
#define SMCA_MSR_END		(SMCA_MSR_BASE + SMCA_MSR_STRIDE * HWLAB_MCE_MAX_BANKS)
#define MSR_CU_DEF_ERR		0xc0000410u
/* x2APIC MSR of APIC register 0x500 (EILVT0): 0x800 + (0x500 >> 4) */
#define X2APIC_MSR_EILVT0	0x850u
#define SMCA_EILVT_COUNT	4
#define MSR_IA32_APICBASE	0x1bu
#define APICBASE_ENABLE		(1ull << 11)
#define APICBASE_X2APIC		(1ull << 10)
#define MSR_K7_HWCR		0xc0010015u
#define HWCR_MCSTATUSWREN	(1ull << 18)

/* Register index within a bank's 16 MSRs (Linux's MSR_AMD64_SMCA_MC0_*). */
enum smca_reg {
	SMCA_CTL = 0, SMCA_STATUS = 1, SMCA_ADDR = 2, SMCA_MISC0 = 3, SMCA_CONFIG = 4,
	SMCA_IPID = 5, SMCA_SYND = 6, SMCA_DESTAT = 8, SMCA_DEADDR = 9,
	SMCA_MISC1 = 0xa, SMCA_MISC4 = 0xd, SMCA_SYND1 = 0xe, SMCA_SYND2 = 0xf,
};

/*
 * MCA_CONFIG: McaX (0), DeferredErrorLoggingSupported (2) and
 * DeferredIntTypeSupported (5) read as 1; the guest may set McaXEn (32) and
 * DeferredIntType (38:37). No IntPresent (10: no thresholding interrupt),
 * no PADDRV (11: Linux then takes the address as usable from POISON) and no
 * LsbInStatus (8): the MISC LSB stays where KVM's bank has it.
 */
#define SMCA_CONFIG_RO		((1ull << 0) | (1ull << 2) | (1ull << 5))
#define SMCA_CONFIG_MCAXEN	(1ull << 32)
#define SMCA_CONFIG_DFR_TYPE_SHIFT 37
#define SMCA_CONFIG_DFR_TYPE	(3ull << SMCA_CONFIG_DFR_TYPE_SHIFT)
#define SMCA_CONFIG_DFR_APIC	1ull
#define SMCA_CONFIG_RW		(SMCA_CONFIG_MCAXEN | SMCA_CONFIG_DFR_TYPE)
/*
 * MCA_IPID: every bank a Unified Memory Controller (HWID 0x96, McaType 0:
 * Linux's SMCA_UMC, "umc"), instance = bank: the errors hwlab-vmm injects
 * are memory errors, and smca_mce_is_memory_error() wants UMC.
 */
#define SMCA_IPID_UMC(bank)	((0x96ull << 32) | (uint64_t)(bank))
/* MSR_CU_DEF_ERR: deferred LVT offset 2 (bits 7:4), threshold offset 1 (15:12) */
#define CU_DEF_ERR_RESET	0x1020ull
#define CU_DEF_ERR_DFR_OFFSET(v) ((unsigned int)((v) >> 4) & 0xf)
#define CU_DEF_ERR_RW		0xf0f6ull
/* An extended LVT entry: vector 7:0, message type 10:8, mask 16 (reset: masked). */
#define EILVT_VECTOR(v)		((v) & 0xffu)
#define EILVT_MSG_TYPE(v)	(((v) >> 8) & 7u)
#define EILVT_MASKED		(1u << 16)
#define EILVT_RW		(EILVT_MASKED | 0x7ffu)

struct smca_vcpu {
	unsigned int nbanks;			/* the guest's (MCG_CAP); the others #GP */
	uint64_t config[HWLAB_MCE_MAX_BANKS];	/* the guest's SMCA_CONFIG_RW bits */
	uint64_t destat[HWLAB_MCE_MAX_BANKS], deaddr[HWLAB_MCE_MAX_BANKS];
	uint64_t misc_hi[HWLAB_MCE_MAX_BANKS][4];	/* MISC1-4: no blocks, kept as written */
	uint64_t cu_def_err;
	uint32_t eilvt[SMCA_EILVT_COUNT];
	/* counted for the report: every MSR exit taken, those refused (#GP) */
	unsigned long msr_exits, msr_refused;
	unsigned long raised, polled;		/* batches told each way */
	/*
	 * The spread's pace (smca_spread_batch_ready()): batches sent after the
	 * guest was seen halted or after SMCA_BATCH_BUSY_NS, and the time from
	 * the guest's read of a batch to the next one (the VMM's part).
	 */
	unsigned long pace_idle, pace_busy;
	uint64_t pace_wait_ns, pace_read_ns;
	/*
	 * Where a batch's time goes, summed over the batches the pace sent
	 * (smca_kvm.c): from its interrupt to the guest's first SMCA MSR exit
	 * (delivery), from there to its last (the handler, its exits
	 * included), and from there to the next batch (the guest's work on
	 * it and the VMM's wait to see it idle).
	 */
	uint64_t t_raised, t_first_exit, t_last_exit;
	uint64_t batch_deliver_ns, batch_handler_ns, batch_work_ns;
	unsigned long batches_timed;
};

/*
 * What the guest wrote into the SMCA view, as a snapshot or a migration
 * carries it (migrate/vcpu_state.c): the registers, not the counts.
 */
struct smca_saved {
	uint32_t nbanks;
	uint32_t eilvt[SMCA_EILVT_COUNT];
	uint64_t cu_def_err;
	uint64_t config[HWLAB_MCE_MAX_BANKS];
	uint64_t destat[HWLAB_MCE_MAX_BANKS], deaddr[HWLAB_MCE_MAX_BANKS];
	uint64_t misc_hi[HWLAB_MCE_MAX_BANKS][4];
};

/*
 * The legacy bank and the vCPU state an SMCA access needs, KVM's in the
 * VMM, a fake's in the unit tests. Each returns 0, or -1 if it failed.
 */
struct smca_backend {
	int (*get_msr)(void *ctx, uint32_t index, uint64_t *data);
	int (*set_msr)(void *ctx, uint32_t index, uint64_t data);
	void *ctx;
};

/*
 * Power-on state of a vCPU with nbanks banks (at most HWLAB_MCE_MAX_BANKS):
 * every bank's CONFIG clear, the LVT entries masked.
 */
void smca_vcpu_reset(struct smca_vcpu *s, unsigned int nbanks);

/* Whether index is an MSR this file emulates (the exit is ours to answer). */
int smca_msr_is_ours(uint32_t index);

/*
 * The guest's RDMSR/WRMSR of index: 0 with *data read (or written), -1 for
 * a #GP (a register that does not exist, a write KVM would refuse on the
 * legacy bank, the x2APIC LVT outside x2APIC mode, or a backend failure).
 */
int smca_msr_read(struct smca_vcpu *s, const struct smca_backend *b, uint32_t index,
		  uint64_t *data);
int smca_msr_write(struct smca_vcpu *s, const struct smca_backend *b, uint32_t index,
		   uint64_t data);

/* How the guest hears of a deferred error in bank: the decision and its reason. */
enum smca_dfr {
	SMCA_DFR_INTERRUPT,		/* raise *vector */
	SMCA_DFR_BANK_NOT_APIC,		/* MCA_CONFIG DeferredIntType is not APIC */
	SMCA_DFR_OFFSET_BAD,		/* MSR_CU_DEF_ERR names no LVT entry (>= 4) */
	SMCA_DFR_MASKED,		/* the LVT entry is masked (its reset state) */
	SMCA_DFR_NOT_FIXED,		/* message type is not fixed (SMI, NMI, ...) */
	SMCA_DFR_BAD_VECTOR,		/* a vector below 32: an exception's */
};
enum smca_dfr smca_dfr_decide(const struct smca_vcpu *s, unsigned int bank, uint8_t *vector);
/* "interrupt", or why the poll: for the report. */
const char *smca_dfr_reason(enum smca_dfr d);

/*
 * The spread of a lost huge page, a batch per interrupt: may the next batch
 * go now? Each deferred error the guest reads in its handler is a record in
 * its MCE pool (7.2: 80 of them, mce/genpool.c), freed only when its work
 * queue has called memory_failure() for it; one it cannot store is dropped
 * ("MCE records pool full!") and its page is never isolated. The handler
 * clears the last bank in an MSR exit, inside the handler: a batch written
 * then is the next interrupt the moment the handler returns, and the work
 * queue never runs (measured: 17 batches in 2 s, 80 pages isolated, the
 * rest dropped, the guest dead at the first untold page it touched). So
 * the next batch waits until the guest has read the whole last one and then
 * halted (its work done: it had nothing left to run). A guest that never
 * idles gets one every SMCA_BATCH_BUSY_NS: long, because a guest still
 * working through the last batch loses what overflows its pool (measured:
 * with a one-second fallback, a guest printing four console lines a page
 * took 31 pages a second at 8 a second and died at a dropped page); 80
 * records in 10 s is safe down to 4 pages a second.
 */
#define SMCA_BATCH_BUSY_NS	10000000000ull
int smca_spread_batch_due(int last_batch_read, int guest_halted, uint64_t since_raise_ns);

#endif
