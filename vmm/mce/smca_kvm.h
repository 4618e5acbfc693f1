/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The SMCA view (smca.h) on KVM: the CPUID bit, the MSR filter and exits
 * that bring the guest's SMCA and extended-LVT accesses to the vCPU thread,
 * and the deferred-error interrupt (KVM_SIGNAL_MSI).
 */
#ifndef HWLAB_SMCA_KVM_H
#define HWLAB_SMCA_KVM_H

struct vm;
struct vcpu;
struct pending_mce;

/*
 * With MCE_STYLE_SMCA: the CPUID bit, KVM_X86_SET_MSR_FILTER denying the
 * SMCA bank range and MSR_CU_DEF_ERR (so their accesses exit), and
 * KVM_CAP_X86_USER_SPACE_MSR for filtered and invalid accesses (the x2APIC
 * extended LVT, which KVM refuses). 0, or -1 after a message naming what
 * KVM lacks.
 */
int smca_setup_vm(struct vm *vm);

/* A KVM_EXIT_X86_RDMSR/WRMSR on v's thread: answered, or a #GP. Returns 0. */
int smca_msr_exit(struct vcpu *v);

/*
 * A deferred error was just written into p's bank on v: how the guest
 * hears of it (p->told, and p->told_why for the poll), and whether v must
 * raise its deferred-error vector before it runs again.
 */
void smca_tell_deferred(struct vcpu *v, struct pending_mce *p);

/* Before KVM_RUN: one interrupt for the batch of banks written, if any. */
void smca_raise_pending(struct vcpu *v);
/*
 * Whether the guest may take the spread's next batch at this exit
 * (smca_spread_batch_due()): last_batch_read, and the vCPU halted (KVM's
 * mp_state, read at a kick; *halted says which) or the last batch long
 * enough ago. smca_spread_batch_sent() counts a batch that then went, for
 * the smca line.
 */
int smca_spread_batch_ready(struct vcpu *v, int last_batch_read, int *halted);
void smca_spread_batch_sent(struct vcpu *v, int halted);

/* As v's thread ends: its counts, one "smca" report line. */
void smca_report_vcpu(struct vcpu *v);

/*
 * The guest's SMCA registers of v, out of and back into its view. A restore
 * refuses a bank count other than this VM's (the guest would find banks
 * gone). 0, or -1 after a message.
 */
struct smca_saved;
void smca_save_vcpu(const struct vcpu *v, struct smca_saved *out);
int smca_restore_vcpu(struct vcpu *v, const struct smca_saved *in);

#endif
