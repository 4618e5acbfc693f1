// SPDX-License-Identifier: GPL-2.0
/* The SMCA view on KVM (smca_kvm.h). */
#include "mce/smca_kvm.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/kvm.h>

#include "core/kvm_ioctl.h"
#include "core/report.h"
#include "core/vm.h"
#include "clock.h"
#include "log.h"
#include "mce/mce.h"
#include "mce/mce_delivery.h"
#include "mce/mce_event.h"
#include "mce/smca.h"
#include "x86/cpuid.h"

/* The legacy bank MSRs through KVM, on the vCPU's own thread (smca_backend). */
static int vcpu_msr_get(void *ctx, uint32_t index, uint64_t *data)
{
	const struct vcpu *v = ctx;

	return vcpu_get_msr(v->fd, v->id, index, data);
}

static int vcpu_msr_set(void *ctx, uint32_t index, uint64_t data)
{
	const struct vcpu *v = ctx;

	return vcpu_set_msr(v->fd, v->id, index, data);
}

int smca_setup_vm(struct vm *vm)
{
	static uint8_t deny[SMCA_MSR_STRIDE * HWLAB_MCE_MAX_BANKS / 8];	/* all 0: deny */
	struct kvm_msr_filter filter = {
		.flags = KVM_MSR_FILTER_DEFAULT_ALLOW,
		.ranges = {
			{ .flags = KVM_MSR_FILTER_READ | KVM_MSR_FILTER_WRITE, .base = SMCA_MSR_BASE,
			  .nmsrs = SMCA_MSR_STRIDE * HWLAB_MCE_MAX_BANKS, .bitmap = deny },
			{ .flags = KVM_MSR_FILTER_READ | KVM_MSR_FILTER_WRITE, .base = MSR_CU_DEF_ERR,
			  .nmsrs = 1, .bitmap = deny },
		},
	};
	struct kvm_enable_cap cap = {
		.cap = KVM_CAP_X86_USER_SPACE_MSR,
		.args[0] = KVM_MSR_EXIT_REASON_FILTER | KVM_MSR_EXIT_REASON_INVAL,
	};
	int have_exit, have_filter;

	if (!(vm->mce_style & MCE_STYLE_SMCA))
		return 0;
	have_exit = kvm_ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_X86_USER_SPACE_MSR);
	have_filter = kvm_ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_X86_MSR_FILTER);
	if (have_exit <= 0 || have_filter <= 0) {
		pr_err("--smca on: KVM lacks %s, without which the guest's SMCA MSRs cannot "
		       "reach the VMM", have_exit <= 0 ? "KVM_CAP_X86_USER_SPACE_MSR" :
		       "KVM_CAP_X86_MSR_FILTER");
		return -1;
	}
	if (cpuid_set_smca(vm->cpuid)) {
		pr_err("--smca on: KVM_GET_SUPPORTED_CPUID has no leaf 0x80000007");
		return -1;
	}
	if (kvm_ioctl(vm->vm_fd, KVM_ENABLE_CAP, &cap) < 0 ||
	    kvm_ioctl(vm->vm_fd, KVM_X86_SET_MSR_FILTER, &filter) < 0)
		return -1;
	return 0;
}

int smca_msr_exit(struct vcpu *v)
{
	struct kvm_run *run = v->run;
	struct smca_backend b = { .get_msr = vcpu_msr_get, .set_msr = vcpu_msr_set, .ctx = v };
	int r;

	/* copied out of the shared page first: the answer is ours alone */
	uint32_t index = run->msr.index;
	uint64_t data = run->msr.data;
	struct smca_vcpu *s = &v->mce->smca;

	if (s->t_raised) {	/* a batch's handler at work: its span */
		s->t_last_exit = monotonic_ns();
		if (!s->t_first_exit)
			s->t_first_exit = s->t_last_exit;
	}
	if (run->exit_reason == KVM_EXIT_X86_RDMSR) {
		r = smca_msr_read(s, &b, index, &data);
		run->msr.data = r ? 0 : data;
	} else {
		r = smca_msr_write(s, &b, index, data);
	}
	run->msr.error = r ? 1 : 0;
	return 0;
}

void smca_tell_deferred(struct vcpu *v, struct pending_mce *p)
{
	enum smca_dfr d;
	uint8_t vector = 0;

	if (!(v->vm->mce_style & MCE_STYLE_SMCA)) {
		p->told = "poll";
		p->told_why = "no SMCA: the guest has no deferred-error interrupt";
		return;
	}
	d = smca_dfr_decide(&v->mce->smca, p->mce.bank, &vector);
	if (d == SMCA_DFR_INTERRUPT) {
		p->told = "interrupt";
		v->mce->dfr_vector = vector;
		v->mce->dfr_raise = 1;
		return;
	}
	p->told = "poll";
	p->told_why = smca_dfr_reason(d);
	v->mce->smca.polled++;
}

void smca_raise_pending(struct vcpu *v)
{
	struct kvm_msi msi = {
		/* fixed delivery, physical destination: this vCPU's APIC ID */
		.address_lo = 0xfee00000u | (v->id << 12),
		.data = v->mce->dfr_vector,
	};
	int r;

	if (!v->mce->dfr_raise)
		return;
	v->mce->dfr_raise = 0;
	r = ioctl(v->vm->vm_fd, KVM_SIGNAL_MSI, &msi);
	if (r > 0) {
		v->mce->smca.raised++;
		v->mce->smca.t_raised = monotonic_ns();
		v->mce->smca.t_first_exit = 0;
		return;
	}
	/* 0: the guest's APIC did not take it; the error waits for the poll */
	report("dfr_interrupt", "\"vcpu\":%u,\"vector\":%u,\"status\":\"not_delivered\","
	       "\"reason\":\"KVM_SIGNAL_MSI: %s\"", v->id, v->mce->dfr_vector,
	       r ? strerror(errno) : "the local APIC did not accept it");
}

int smca_spread_batch_ready(struct vcpu *v, int last_batch_read, int *halted)
{
	struct smca_vcpu *s = &v->mce->smca;
	struct kvm_mp_state mp = { 0 };
	uint64_t now;

	*halted = 0;
	if (!last_batch_read) {
		s->pace_read_ns = 0;	/* the batch, or an AO since, still in a bank */
		return 0;
	}
	now = monotonic_ns();
	if (!s->pace_read_ns)
		s->pace_read_ns = now;
	/* no batch of this vCPU's yet: the busy fallback's clock starts now */
	if (!v->mce->spread_batch_ns)
		v->mce->spread_batch_ns = now;
	/* the vCPU thread's own: KVM_RUN has returned, so this does not block */
	*halted = vcpu_ioctl(v, KVM_GET_MP_STATE, &mp) == 0 && mp.mp_state == KVM_MP_STATE_HALTED;
	return smca_spread_batch_due(last_batch_read, *halted, now - v->mce->spread_batch_ns);
}

void smca_spread_batch_sent(struct vcpu *v, int halted)
{
	struct smca_vcpu *s = &v->mce->smca;
	uint64_t now = monotonic_ns();

	if (s->pace_read_ns)
		s->pace_wait_ns += now - s->pace_read_ns;
	s->pace_read_ns = 0;
	if (halted)
		s->pace_idle++;
	else
		s->pace_busy++;
	/* the last batch's timeline, if its handler was seen */
	if (s->t_raised && s->t_first_exit) {
		s->batch_deliver_ns += s->t_first_exit - s->t_raised;
		s->batch_handler_ns += s->t_last_exit - s->t_first_exit;
		s->batch_work_ns += now - s->t_last_exit;
		s->batches_timed++;
	}
	s->t_raised = 0;
}

void smca_report_vcpu(struct vcpu *v)
{
	const struct smca_vcpu *s = &v->mce->smca;
	unsigned int offset = CU_DEF_ERR_DFR_OFFSET(s->cu_def_err);
	char lvt[16] = "none";	/* MSR_CU_DEF_ERR names no entry (the guest's write) */

	if (!(v->vm->mce_style & MCE_STYLE_SMCA))
		return;
	if (offset < SMCA_EILVT_COUNT)
		snprintf(lvt, sizeof(lvt), "%#x", s->eilvt[offset]);
	report("smca", "\"vcpu\":%u,\"msr_exits\":%lu,\"msr_refused\":%lu,\"dfr_interrupts\":%lu,"
	       "\"dfr_polls\":%lu,\"dfr_lvt\":\"%s\",\"cu_def_err\":\"%#llx\","
	       "\"spread_batches_idle\":%lu,\"spread_batches_busy\":%lu,\"spread_wait_ms\":%llu,"
	       "\"spread_kicks\":%lu,\"idle_seen_by\":\"%s\",\"batches_timed\":%lu,"
	       "\"batch_deliver_ms\":%.1f,\"batch_handler_ms\":%.1f,\"batch_work_ms\":%.1f",
	       v->id, s->msr_exits, s->msr_refused, s->raised, s->polled, lvt,
	       (unsigned long long)s->cu_def_err, s->pace_idle, s->pace_busy,
	       (unsigned long long)(s->pace_wait_ns / 1000000),
	       __atomic_load_n(&v->mce->spread_kicks, __ATOMIC_RELAXED),
	       v->mce->blocking.fd >= 0 ? "kvm_stats" : "kick", s->batches_timed,
	       s->batch_deliver_ns / 1e6, s->batch_handler_ns / 1e6, s->batch_work_ns / 1e6);
}

void smca_save_vcpu(const struct vcpu *v, struct smca_saved *out)
{
	const struct smca_vcpu *s = &v->mce->smca;

	memset(out, 0, sizeof(*out));
	out->nbanks = s->nbanks;
	memcpy(out->eilvt, s->eilvt, sizeof(out->eilvt));
	out->cu_def_err = s->cu_def_err;
	memcpy(out->config, s->config, sizeof(out->config));
	memcpy(out->destat, s->destat, sizeof(out->destat));
	memcpy(out->deaddr, s->deaddr, sizeof(out->deaddr));
	memcpy(out->misc_hi, s->misc_hi, sizeof(out->misc_hi));
}

int smca_restore_vcpu(struct vcpu *v, const struct smca_saved *in)
{
	struct smca_vcpu *s = &v->mce->smca;

	if (in->nbanks != s->nbanks) {
		pr_err("vCPU %u's SMCA view had %u banks; this VM has %u", v->id, in->nbanks,
		       s->nbanks);
		return -1;
	}
	memcpy(s->eilvt, in->eilvt, sizeof(s->eilvt));
	s->cu_def_err = in->cu_def_err;
	memcpy(s->config, in->config, sizeof(s->config));
	memcpy(s->destat, in->destat, sizeof(s->destat));
	memcpy(s->deaddr, in->deaddr, sizeof(s->deaddr));
	memcpy(s->misc_hi, in->misc_hi, sizeof(s->misc_hi));
	return 0;
}
