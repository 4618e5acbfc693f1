// SPDX-License-Identifier: GPL-2.0
#include "mce/mce.h"

#include <errno.h>
#include <sys/ioctl.h>

#include "core/kvm_ioctl.h"
#include "log.h"
#include "core/vm.h"
#include "mce/smca_kvm.h"
#include "mce/mce_delivery.h"
#include "x86/cpuid.h"

/*
 * Whose machine-check encoding the guest gets. A Linux guest decodes
 * machine checks by its CPU vendor, so it gets its vendor's (as QEMU does);
 * the bare-metal guest keeps Intel's, which its tests hold to QEMU's
 * values. An AMD encoding also needs SUCCOR in CPUID, or Linux panics on
 * every uncorrected error (mce_severity_amd()).
 */
static int mce_check_kvm(struct vm *vm);

int mce_choose_style(struct vm *vm)
{
	const struct vmm_options *opt = vm->opt;
	enum cpu_vendor enc;

	if (opt->mce_vendor >= 0)
		enc = opt->mce_vendor;
	else
		enc = vm->mce_as_vcpu_vendor ? vm->vendor : CPU_VENDOR_INTEL;
	vm->mce_style = (opt->mce_page_lsb ? MCE_STYLE_PAGE_LSB : 0) |
			(enc == CPU_VENDOR_AMD ? MCE_STYLE_AMD : 0);
	/*
	 * Intel's #MC goes to every CPU on the models QEMU broadcasts on, and
	 * a Linux guest's handler waits for all of them (mce_start()); AMD's
	 * is local, as QEMU's AMD support keeps it.
	 */
	if (enc != CPU_VENDOR_AMD && cpuid_mca_broadcast(vm->cpuid))
		vm->mce_style |= MCE_STYLE_BROADCAST;
	if ((vm->mce_style & MCE_STYLE_AMD) && cpuid_set_mca_recovery(vm->cpuid)) {
		pr_err("KVM_GET_SUPPORTED_CPUID has no leaf 0x80000007: cannot give the guest "
		       "SUCCOR, without which AMD machine checks are fatal to it");
		return -1;
	}
	/*
	 * Scalable MCA, for its deferred-error interrupt (smca.h): AMD's
	 * encoding only, and on request until every guest kernel is shown to
	 * live with it (auto is off).
	 */
	if (opt->smca == 1 && !(vm->mce_style & MCE_STYLE_AMD)) {
		pr_err("--smca on needs AMD machine checks (an AMD vCPU with --kernel, or "
		       "--mce-vendor amd)");
		return -1;
	}
	if (opt->smca == 1)
		vm->mce_style |= MCE_STYLE_SMCA;
	if (mce_check_kvm(vm))
		return -1;
	return smca_setup_vm(vm);
}

/*
 * What KVM can give every vCPU, asked once: KVM_CAP_MCE answers with the
 * most banks KVM_X86_SETUP_MCE accepts. Picks vm->mce_banks.
 */
static int mce_check_kvm(struct vm *vm)
{
	uint64_t supported = 0, want_flags = HWLAB_MCG_CAP_FLAGS;
	int max_banks = kvm_ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_MCE);

	if (max_banks < 0)
		return -1;
	if (max_banks == 0) {
		pr_err("KVM has no KVM_CAP_MCE: cannot give the guest machine checks");
		return -1;
	}
	if (kvm_ioctl(vm->kvm_fd, KVM_X86_GET_MCE_CAP_SUPPORTED, &supported) < 0)
		return -1;
	vm->mce_banks = mce_choose_banks(vm->opt->mce_banks, !!(vm->mce_style & MCE_STYLE_SMCA),
					 max_banks);
	if ((supported & want_flags) != want_flags || max_banks < (int)vm->mce_banks) {
		pr_err("KVM supports MCG_CAP flags %#llx and %d banks; need MCG_CTL_P|MCG_SER_P "
		       "and %u banks", (unsigned long long)supported, max_banks, vm->mce_banks);
		return -1;
	}
	return 0;
}

/*
 * A Scalable MCA guest takes its deferred errors a batch per interrupt, and
 * a batch is as big as the banks that may hold one: a lost 2 MiB is 512
 * pages, 17 batches of 31 with KVM's 32 banks against 57 of 9 with QEMU's
 * 10. A guest without SMCA keeps QEMU's layout unless told.
 */
unsigned int mce_choose_banks(int opt_banks, int smca, int kvm_max_banks)
{
	if (opt_banks > 0)	/* the option allows 10..32; more would not fit the arrays */
		return opt_banks < HWLAB_MCE_MAX_BANKS ? opt_banks : HWLAB_MCE_MAX_BANKS;
	if (!smca || kvm_max_banks <= HWLAB_MCE_BANKS)
		return HWLAB_MCE_BANKS;	/* too few: mce_check_kvm() says so */
	return kvm_max_banks < HWLAB_MCE_MAX_BANKS ? kvm_max_banks : HWLAB_MCE_MAX_BANKS;
}

int mce_setup_vcpu(const struct vcpu *v)
{
	uint64_t cap = HWLAB_MCG_CAP_FLAGS | v->vm->mce_banks;

	if (vcpu_ioctl(v, KVM_X86_SETUP_MCE, &cap) < 0)
		return -1;
	/*
	 * A lost huge page's batches wait for the guest to idle: KVM's
	 * statistic says when, without an exit (mce_delivery_kick_if_queued()).
	 * Without it (before Linux 5.16), a kick every 2 ms looks.
	 */
	if (v->vm->mce_style & MCE_STYLE_SMCA)
		kvm_stat_open(v->fd, "blocking", &v->mce->blocking);
	return 0;
}

/*
 * KVM turns an uncorrected error that the guest cannot take (CR4.MCE clear,
 * or a machine check already in progress) into a silent triple fault; look
 * first so the VMM can say what happened.
 */
enum mce_guest_state mce_guest_state(const struct vcpu *v)
{
	struct kvm_sregs sregs;
	uint64_t mcg_status;

	if (vcpu_ioctl(v, KVM_GET_SREGS, &sregs) < 0)
		return MCE_GUEST_UNKNOWN;
	if (!(sregs.cr4 & X86_CR4_MCE))
		return MCE_GUEST_NO_MCE;
	if (vcpu_get_msr(v->fd, v->id, MSR_IA32_MCG_STATUS, &mcg_status))
		return MCE_GUEST_UNKNOWN;
	if (mcg_status & MCG_STATUS_MCIP)
		return MCE_GUEST_IN_MCE;
	return MCE_GUEST_READY;
}

const char *mce_guest_state_reason(enum mce_guest_state state)
{
	switch (state) {
	case MCE_GUEST_READY:
		return NULL;
	case MCE_GUEST_NO_MCE:
		return "guest has CR4.MCE clear (no machine-check support)";
	case MCE_GUEST_IN_MCE:
		return "guest is already handling a machine check (MCG_STATUS.MCIP set)";
	case MCE_GUEST_UNKNOWN:
		break;
	}
	return "cannot read the guest's CR4/MCG_STATUS (KVM_GET_SREGS/KVM_GET_MSRS failed)";
}

unsigned int mce_free_banks(const struct vcpu *v, unsigned int mask)
{
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry e[HWLAB_MCE_MAX_BANKS];
	} msrs = { .hdr.nmsrs = 0 };
	unsigned int bank, i, free_mask = 0;

	for (bank = 0; bank < v->vm->mce_banks; bank++)
		if (mask & (1u << bank))
			msrs.e[msrs.hdr.nmsrs++].index = MSR_IA32_MCx_STATUS(bank);
	if (!msrs.hdr.nmsrs || vcpu_get_msrs(v->fd, v->id, &msrs.hdr))
		return 0;
	for (i = 0; i < msrs.hdr.nmsrs; i++)
		if (!(msrs.e[i].data & MCI_STATUS_VAL))
			free_mask |= 1u << ((msrs.e[i].index - MSR_IA32_MCx_STATUS(0)) / 4);
	return free_mask;
}

int mce_pick_deferred_bank(unsigned int free_mask)
{
	int bank;

	free_mask &= mce_deferred_banks(HWLAB_MCE_MAX_BANKS);
	if (free_mask & (1u << HWLAB_MCE_BANK_DEFERRED))
		return HWLAB_MCE_BANK_DEFERRED;
	for (bank = HWLAB_MCE_BANK_DEFERRED - 1; bank >= 0; bank--)
		if (free_mask & (1u << bank))
			return bank;
	/* above the AR bank: only a guest given more than QEMU's 10 has them */
	for (bank = HWLAB_MCE_MAX_BANKS - 1; bank > HWLAB_MCE_BANK; bank--)
		if (free_mask & (1u << bank))
			return bank;
	return -1;
}

int mce_inject(const struct vcpu *v, const struct kvm_x86_mce *mce)
{
	return vcpu_ioctl(v, KVM_X86_SET_MCE, mce) < 0 ? -1 : 0;
}

int mce_reset_vcpu(const struct vcpu *v)
{
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry e[1 + HWLAB_MCE_MAX_BANKS];
	} msrs = { .hdr.nmsrs = 1, .e[0].index = MSR_IA32_MCG_STATUS };
	unsigned int bank;

	/* deferred errors may wait in any bank but the AR one: clear them all */
	for (bank = 0; bank < v->vm->mce_banks; bank++)
		msrs.e[msrs.hdr.nmsrs++].index = MSR_IA32_MCx_STATUS(bank);
	return vcpu_set_msrs(v->fd, v->id, &msrs.hdr);
}
