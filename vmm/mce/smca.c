// SPDX-License-Identifier: GPL-2.0
/* The SMCA view's registers and the deferred-error decision (smca.h). Pure. */
#include "mce/smca.h"

#include <string.h>

#include "x86_mce.h"

void smca_vcpu_reset(struct smca_vcpu *s, unsigned int nbanks)
{
	unsigned int i;

	s->nbanks = nbanks < HWLAB_MCE_MAX_BANKS ? nbanks : HWLAB_MCE_MAX_BANKS;
	memset(s->config, 0, sizeof(s->config));
	memset(s->destat, 0, sizeof(s->destat));
	memset(s->deaddr, 0, sizeof(s->deaddr));
	memset(s->misc_hi, 0, sizeof(s->misc_hi));
	s->cu_def_err = CU_DEF_ERR_RESET;
	s->pace_read_ns = 0;	/* no batch of the old guest's is being read */
	s->t_raised = 0;	/* nor timed: the new guest's exits are not its handler */
	for (i = 0; i < SMCA_EILVT_COUNT; i++)
		s->eilvt[i] = EILVT_MASKED;
}

/* Which of this file's MSRs index is: a bank register (bank, reg), or another. */
enum smca_msr { OURS_NONE, OURS_DEF_ERR, OURS_EILVT, OURS_BANK };

static enum smca_msr decode(uint32_t index, unsigned int *bank, unsigned int *reg)
{
	if (index == MSR_CU_DEF_ERR)
		return OURS_DEF_ERR;
	if (index >= X2APIC_MSR_EILVT0 && index < X2APIC_MSR_EILVT0 + SMCA_EILVT_COUNT)
		return OURS_EILVT;
	if (index < SMCA_MSR_BASE || index >= SMCA_MSR_END)
		return OURS_NONE;
	*bank = (index - SMCA_MSR_BASE) / SMCA_MSR_STRIDE;
	*reg = (index - SMCA_MSR_BASE) % SMCA_MSR_STRIDE;
	return OURS_BANK;
}

int smca_msr_is_ours(uint32_t index)
{
	unsigned int bank, reg;

	return decode(index, &bank, &reg) != OURS_NONE;
}

/* The legacy MSR behind an SMCA register of bank, or 0 if it has none. */
static uint32_t legacy_msr(unsigned int bank, unsigned int reg)
{
	switch (reg) {
	case SMCA_CTL:
		return MSR_IA32_MCx_CTL(bank);
	case SMCA_STATUS:
		return MSR_IA32_MCx_STATUS(bank);
	case SMCA_ADDR:
		return MSR_IA32_MCx_ADDR(bank);
	case SMCA_MISC0:
		return MSR_IA32_MCx_MISC(bank);
	}
	return 0;
}

/* The registers kept here as the guest writes them (DESTAT, DEADDR, MISC1-4), or NULL. */
static uint64_t *kept_reg(struct smca_vcpu *s, unsigned int bank, unsigned int reg)
{
	switch (reg) {
	case SMCA_DESTAT:
		return &s->destat[bank];
	case SMCA_DEADDR:
		return &s->deaddr[bank];
	case SMCA_MISC1 ... SMCA_MISC4:
		return &s->misc_hi[bank][reg - SMCA_MISC1];
	}
	return NULL;
}

/* The x2APIC LVT exists only in x2APIC mode: KVM would #GP any 0x8xx MSR otherwise. */
static int x2apic_mode(const struct smca_backend *b)
{
	uint64_t base;

	if (b->get_msr(b->ctx, MSR_IA32_APICBASE, &base))
		return 0;
	return (base & (APICBASE_ENABLE | APICBASE_X2APIC)) == (APICBASE_ENABLE | APICBASE_X2APIC);
}

/* The guest's read of bank register reg: 0, or -1 for a #GP. */
static int bank_read(struct smca_vcpu *s, const struct smca_backend *b, unsigned int bank,
		     unsigned int reg, uint64_t *data)
{
	uint64_t *kept = kept_reg(s, bank, reg);

	if (kept) {
		*data = *kept;
		return 0;
	}
	switch (reg) {
	case SMCA_CTL:
	case SMCA_STATUS:
	case SMCA_ADDR:
	case SMCA_MISC0:
		return b->get_msr(b->ctx, legacy_msr(bank, reg), data) ? -1 : 0;
	case SMCA_CONFIG:
		*data = SMCA_CONFIG_RO | s->config[bank];
		return 0;
	case SMCA_IPID:
		*data = SMCA_IPID_UMC(bank);
		return 0;
	case SMCA_SYND:
	case SMCA_SYND1:
	case SMCA_SYND2:
		*data = 0;	/* no SYNDV in any status hwlab-vmm injects */
		return 0;
	}
	return -1;
}

/*
 * A write to a legacy bank register, with the checks KVM applies to the
 * guest's own writes there (set_msr_mce()): MCi_CTL takes only 0 or all
 * ones (bits 10 and 0 aside), MCi_STATUS only 0 unless HWCR.McStatusWrEn.
 * KVM_SET_MSRS is host-initiated and would take anything.
 */
static int legacy_write(const struct smca_backend *b, unsigned int bank, unsigned int reg,
			uint64_t data)
{
	uint64_t hwcr;

	if (reg == SMCA_CTL && data && (data | (1ull << 10) | 1) != ~0ull)
		return -1;
	if (reg == SMCA_STATUS && data &&
	    (b->get_msr(b->ctx, MSR_K7_HWCR, &hwcr) || !(hwcr & HWCR_MCSTATUSWREN)))
		return -1;
	return b->set_msr(b->ctx, legacy_msr(bank, reg), data);
}

/* The guest's write of bank register reg: 0, or -1 for a #GP. */
static int bank_write(struct smca_vcpu *s, const struct smca_backend *b, unsigned int bank,
		      unsigned int reg, uint64_t data)
{
	uint64_t *kept = kept_reg(s, bank, reg);

	if (kept) {
		*kept = data;
		return 0;
	}
	switch (reg) {
	case SMCA_CTL:
	case SMCA_STATUS:
	case SMCA_ADDR:
	case SMCA_MISC0:
		return legacy_write(b, bank, reg, data) ? -1 : 0;
	case SMCA_CONFIG:
		s->config[bank] = data & SMCA_CONFIG_RW;
		return 0;
	case SMCA_IPID:		/* read-only, writes ignored as on hardware */
	case SMCA_SYND:
	case SMCA_SYND1:
	case SMCA_SYND2:
		return 0;
	}
	return -1;
}

/*
 * One access of the guest's to an MSR of this file, read or written
 * (*data in or out): 0, or -1 for a #GP, counted.
 */
static int msr_access(struct smca_vcpu *s, const struct smca_backend *b, uint32_t index,
		      int write, uint64_t *data)
{
	unsigned int bank, reg;
	int r = -1;

	s->msr_exits++;
	switch (decode(index, &bank, &reg)) {
	case OURS_DEF_ERR:
		if (write)
			s->cu_def_err = *data & CU_DEF_ERR_RW;
		else
			*data = s->cu_def_err;
		r = 0;
		break;
	case OURS_EILVT:
		if (x2apic_mode(b)) {
			uint32_t *lvt = &s->eilvt[index - X2APIC_MSR_EILVT0];

			if (write)
				*lvt = (uint32_t)*data & EILVT_RW;
			else
				*data = *lvt;
			r = 0;
		}
		break;
	case OURS_BANK:
		if (bank < s->nbanks)	/* past the guest's MCG_CAP count: none */
			r = write ? bank_write(s, b, bank, reg, *data) :
				    bank_read(s, b, bank, reg, data);
		break;
	case OURS_NONE:
		break;
	}
	if (r)
		s->msr_refused++;
	return r;
}

int smca_msr_read(struct smca_vcpu *s, const struct smca_backend *b, uint32_t index,
		  uint64_t *data)
{
	return msr_access(s, b, index, 0, data);
}

int smca_msr_write(struct smca_vcpu *s, const struct smca_backend *b, uint32_t index,
		   uint64_t data)
{
	return msr_access(s, b, index, 1, &data);
}

enum smca_dfr smca_dfr_decide(const struct smca_vcpu *s, unsigned int bank, uint8_t *vector)
{
	unsigned int offset = CU_DEF_ERR_DFR_OFFSET(s->cu_def_err);
	uint32_t lvt;

	if (bank >= s->nbanks ||
	    ((s->config[bank] & SMCA_CONFIG_DFR_TYPE) >> SMCA_CONFIG_DFR_TYPE_SHIFT) !=
	    SMCA_CONFIG_DFR_APIC)
		return SMCA_DFR_BANK_NOT_APIC;
	if (offset >= SMCA_EILVT_COUNT)
		return SMCA_DFR_OFFSET_BAD;
	lvt = s->eilvt[offset];
	if (lvt & EILVT_MASKED)
		return SMCA_DFR_MASKED;
	if (EILVT_MSG_TYPE(lvt) != 0)
		return SMCA_DFR_NOT_FIXED;
	if (EILVT_VECTOR(lvt) < 32)
		return SMCA_DFR_BAD_VECTOR;
	*vector = EILVT_VECTOR(lvt);
	return SMCA_DFR_INTERRUPT;
}

const char *smca_dfr_reason(enum smca_dfr d)
{
	switch (d) {
	case SMCA_DFR_INTERRUPT:
		return "interrupt";
	case SMCA_DFR_BANK_NOT_APIC:
		return "poll: the bank's MCA_CONFIG DeferredIntType is not APIC";
	case SMCA_DFR_OFFSET_BAD:
		return "poll: MSR_CU_DEF_ERR names no extended LVT entry";
	case SMCA_DFR_MASKED:
		return "poll: the deferred-error LVT entry is masked";
	case SMCA_DFR_NOT_FIXED:
		return "poll: the deferred-error LVT entry is not fixed delivery";
	case SMCA_DFR_BAD_VECTOR:
		return "poll: the deferred-error LVT entry has a vector below 32";
	}
	return "poll";
}

int smca_spread_batch_due(int last_batch_read, int guest_halted, uint64_t since_raise_ns)
{
	return last_batch_read && (guest_halted || since_raise_ns >= SMCA_BATCH_BUSY_NS);
}
