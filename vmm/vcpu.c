// SPDX-License-Identifier: GPL-2.0
/* vCPU setup, the KVM_RUN loop, ucalls and machine-check delivery. */
#define _GNU_SOURCE
#include "vmm.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>

#include "report.h"

#define X86_CR0_PE	(1ULL << 0)
#define X86_CR0_MP	(1ULL << 1)
#define X86_CR0_ET	(1ULL << 4)
#define X86_CR0_NE	(1ULL << 5)
#define X86_CR0_WP	(1ULL << 16)
#define X86_CR0_PG	(1ULL << 31)
#define X86_CR4_PAE	(1ULL << 5)
#define EFER_SCE	(1ULL << 0)
#define EFER_LME	(1ULL << 8)
#define EFER_LMA	(1ULL << 10)
#define AR_REPEAT_LIMIT	16

int vcpu_create(struct vm *vm, unsigned int id)
{
	struct vcpu *v = &vm->vcpus[id];
	char err[256];

	v->vm = vm;
	v->id = id;
	pthread_mutex_init(&v->lock, NULL);
	pthread_cond_init(&v->queued, NULL);
	v->fd = ioctl(vm->vm_fd, KVM_CREATE_VCPU, id);
	if (v->fd < 0) {
		fprintf(stderr, "hwlab-vmm: error: KVM_CREATE_VCPU %u: %s\n", id, strerror(errno));
		return -1;
	}
	v->run = mmap(NULL, vm->run_size, PROT_READ | PROT_WRITE, MAP_SHARED, v->fd, 0);
	if (v->run == MAP_FAILED) {
		fprintf(stderr, "hwlab-vmm: error: mmap kvm_run: %s\n", strerror(errno));
		return -1;
	}
	v->sig.run = v->run;
	/* CPUID first: KVM refuses EFER.LME for a vCPU without long mode. */
	if (ioctl(v->fd, KVM_SET_CPUID2, vm->cpuid)) {
		fprintf(stderr, "hwlab-vmm: error: KVM_SET_CPUID2: %s\n", strerror(errno));
		return -1;
	}
	if (mce_setup_vcpu(vm->kvm_fd, v->fd, err, sizeof(err))) {
		fprintf(stderr, "hwlab-vmm: error: %s\n", err);
		return -1;
	}
	return vcpu_reset(v);
}

static void flat_segment(struct kvm_segment *s, uint16_t sel, uint8_t type, int code)
{
	memset(s, 0, sizeof(*s));
	s->selector = sel;
	s->limit = 0xffffffff;
	s->type = type;
	s->present = 1;
	s->s = 1;
	s->l = code;
	s->db = !code;
	s->g = 1;
}

/* Straight into 64-bit mode at the ELF entry: rdi = vCPU id, rsi = boot info. */
int vcpu_reset(struct vcpu *v)
{
	struct kvm_sregs sregs;
	struct kvm_regs regs;
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry e[2];
	} msrs = {
		.hdr.nmsrs = 2,
		.e = { { .index = MSR_IA32_MCG_STATUS },
		       { .index = MSR_IA32_MCx_STATUS(HWLAB_MCE_BANK) } },
	};

	if (ioctl(v->fd, KVM_GET_SREGS, &sregs))
		return -1;
	sregs.cr0 = X86_CR0_PE | X86_CR0_MP | X86_CR0_ET | X86_CR0_NE | X86_CR0_WP | X86_CR0_PG;
	sregs.cr3 = GUEST_PML4_GPA;
	sregs.cr4 = X86_CR4_PAE;	/* the guest sets CR4.MCE itself */
	sregs.efer = EFER_LME | EFER_LMA | EFER_SCE;
	flat_segment(&sregs.cs, GUEST_SEL_CODE, 11, 1);
	flat_segment(&sregs.ds, GUEST_SEL_DATA, 3, 0);
	sregs.es = sregs.fs = sregs.gs = sregs.ss = sregs.ds;
	memset(&sregs.tr, 0, sizeof(sregs.tr));
	sregs.tr.selector = 0x18;
	sregs.tr.limit = 0x67;
	sregs.tr.type = 11;
	sregs.tr.present = 1;
	sregs.gdt.base = GUEST_GDT_GPA;
	sregs.gdt.limit = 4 * 8 - 1;
	sregs.idt.base = 0;
	sregs.idt.limit = 0;
	if (ioctl(v->fd, KVM_SET_SREGS, &sregs)) {
		fprintf(stderr, "hwlab-vmm: error: KVM_SET_SREGS: %s\n", strerror(errno));
		return -1;
	}
	memset(&regs, 0, sizeof(regs));
	regs.rflags = 0x2;
	regs.rip = v->vm->entry;
	regs.rdi = v->id;
	regs.rsi = GUEST_BOOT_INFO_GPA;
	if (ioctl(v->fd, KVM_SET_REGS, &regs)) {
		fprintf(stderr, "hwlab-vmm: error: KVM_SET_REGS: %s\n", strerror(errno));
		return -1;
	}
	/* A reset guest starts with no machine check in progress. */
	if (ioctl(v->fd, KVM_SET_MSRS, &msrs) != 2) {
		fprintf(stderr, "hwlab-vmm: error: KVM_SET_MSRS(MCG_STATUS, MC9_STATUS)\n");
		return -1;
	}
	v->state = VCPU_RUNNING;
	v->queue_len = 0;
	return 0;
}

int vcpu_queue_mce(struct vcpu *v, const struct pending_mce *p)
{
	pthread_mutex_lock(&v->lock);
	if (v->queue_len == MCE_QUEUE_LEN) {
		pthread_mutex_unlock(&v->lock);
		return -1;
	}
	v->queue[v->queue_len++] = *p;
	pthread_cond_broadcast(&v->queued);
	pthread_mutex_unlock(&v->lock);
	pthread_kill(v->thread, SIG_VCPU_KICK);
	return 0;
}

static void stop_vm(struct vm *vm, int reset)
{
	if (reset)
		vm->reset_requested = 1;
	vm->stop = 1;
	vm_kick_all(vm);
}

/*
 * Mark the extent as told to the guest; returns how many of its pages were
 * not yet. An AO that races with the guest consuming the same page (AR) must
 * not reach the guest a second time.
 */
static int mark_notified(struct vm *vm, const struct gpa_extent *ext)
{
	int added;

	pthread_mutex_lock(&vm->poison_lock);
	added = poison_list_add(&vm->notified, ext->gpa, ext->len);
	pthread_mutex_unlock(&vm->poison_lock);
	return added;
}

#define DELIVER_DEFERRED 1

/*
 * Returns 0 if the vCPU may go on running, DELIVER_DEFERRED for an AO that
 * must wait until the guest has finished its current machine check (retried
 * at the next exit), or -1 when the VM is stopping.
 */
static int deliver(struct vcpu *v, struct pending_mce *p)
{
	enum mce_guest_state state = mce_guest_state(v->fd);
	const char *why = mce_guest_state_reason(state);
	int ao = p->ev.code == BUS_MCEERR_AO;

	if (ao && state == MCE_GUEST_IN_MCE)
		return DELIVER_DEFERRED;	/* one machine check at a time */
	if (ao && state == MCE_GUEST_READY && mark_notified(v->vm, &p->ext) == 0) {
		mce_event_report(v, p, "ignore", "guest already got a machine check for this page");
		return 0;
	}
	if (!ao)
		mark_notified(v->vm, &p->ext);

	if (ao && state == MCE_GUEST_NO_MCE) {
		/* Nothing consumed the poison yet: keep it isolated, tell no one. */
		mce_event_report(v, p, "ignore", why);
		return 0;
	}
	if (state != MCE_GUEST_READY) {
		int reset = v->vm->opt->reset_on_unrecoverable &&
			    v->vm->boot_count <= v->vm->opt->max_resets;

		mce_event_report(v, p, reset ? "reset" : "stop", why);
		v->state = VCPU_FAILED;
		stop_vm(v->vm, reset);
		return -1;
	}
	if (mce_inject(v->fd, &p->mce)) {
		char reason[128];

		snprintf(reason, sizeof(reason), "KVM_X86_SET_MCE: %s", strerror(errno));
		mce_event_report(v, p, "fatal", reason);
		v->state = VCPU_FAILED;
		stop_vm(v->vm, 0);
		return -1;
	}
	v->last_injected_gpa = p->mce.addr;
	__atomic_fetch_add(&v->vm->injected, 1, __ATOMIC_RELAXED);
	mce_event_report(v, p, "inject", NULL);
	return 0;
}

/* An AR that the SIGBUS handler recorded while this thread was in KVM_RUN. */
static int handle_action_required(struct vcpu *v)
{
	struct pending_mce p;

	v->sig.ar_pending = 0;
	if (mce_event_prepare(v->vm, &v->sig.ar, &p) < 0) {
		mce_event_report(v, &p, "fatal", "poison consumed outside guest RAM");
		v->state = VCPU_FAILED;
		stop_vm(v->vm, 0);
		return -1;
	}
	/*
	 * A guest that returns to the access that consumed the poison gets
	 * the same AR forever; so would one told of a different page than the
	 * one it touches. Stop instead of spinning.
	 */
	v->ar_repeats = p.ev.addr == v->last_ar_addr ? v->ar_repeats + 1 : 0;
	v->last_ar_addr = p.ev.addr;
	if (v->ar_repeats >= AR_REPEAT_LIMIT) {
		mce_event_report(v, &p, "fatal", "guest consumed the same poisoned page again after "
				 "every machine check");
		v->state = VCPU_FAILED;
		stop_vm(v->vm, 0);
		return -1;
	}
	return deliver(v, &p);
}

/* AO events queued by the monitor thread, and those deferred at the last exit. */
static int drain_queue(struct vcpu *v)
{
	struct pending_mce local[MCE_QUEUE_LEN];
	unsigned int n, i, kept = 0;

	pthread_mutex_lock(&v->lock);
	n = v->queue_len;
	memcpy(local, v->queue, n * sizeof(local[0]));
	v->queue_len = 0;
	pthread_mutex_unlock(&v->lock);

	for (i = 0; i < n; i++) {
		int r = deliver(v, &local[i]);

		if (r < 0)
			return -1;
		if (r == DELIVER_DEFERRED)
			local[kept++] = local[i];
	}
	if (kept) {
		pthread_mutex_lock(&v->lock);
		memmove(v->queue + kept, v->queue, v->queue_len * sizeof(v->queue[0]));
		memcpy(v->queue, local, kept * sizeof(local[0]));
		v->queue_len += kept;
		pthread_mutex_unlock(&v->lock);
	}
	return 0;
}

static int handle_ucall(struct vcpu *v)
{
	uint32_t ptr = *(uint32_t *)((uint8_t *)v->run + v->run->io.data_offset);
	struct hwlab_ucall *uc = memslot_gpa_to_hva(&v->vm->mem, ptr, sizeof(*uc));
	char msg[2 * UCALL_MSG_LEN];

	if (!uc) {
		report("guest_fail", "\"vcpu\":%u,\"reason\":\"ucall at bad GPA %#x\"", v->id, ptr);
		return -1;
	}
	uc->msg[UCALL_MSG_LEN - 1] = 0;
	json_escape(msg, sizeof(msg), uc->msg);
	switch (uc->cmd) {
	case UCALL_LOG:
		report("guest_log", "\"vcpu\":%u,\"boot\":%u,\"msg\":\"%s\"", v->id,
		       v->vm->boot_count, msg);
		return 0;
	case UCALL_RETIRED:
		report("guest_retired",
		       "\"vcpu\":%u,\"gpa\":\"%#llx\",\"pages\":%llu,\"mci_status\":\"%#llx\","
		       "\"mcg_status\":\"%#llx\",\"bank\":%llu,\"matches_injection\":%s",
		       v->id, (unsigned long long)uc->args[0], (unsigned long long)uc->args[1],
		       (unsigned long long)uc->args[2], (unsigned long long)uc->args[3],
		       (unsigned long long)uc->args[4],
		       uc->args[0] == v->last_injected_gpa ? "true" : "false");
		return 0;
	case UCALL_PASS:
		report("guest_pass",
		       "\"vcpu\":%u,\"pass\":%llu,\"pages_checked\":%llu,\"pages_retired\":%llu,"
		       "\"errors\":%llu", v->id, (unsigned long long)uc->args[0],
		       (unsigned long long)uc->args[1], (unsigned long long)uc->args[2],
		       (unsigned long long)uc->args[3]);
		/* Only on the first boot: a reset guest runs on fresh memory. */
		if (v->id == 0 && v->vm->boot_count == 1 && uc->args[0] == v->vm->opt->poison_pass &&
		    (v->vm->opt->nr_poison || v->vm->opt->poison_vmm_heap))
			return poison_hook_run(v);
		return 0;
	case UCALL_DONE:
		report("guest_done",
		       "\"vcpu\":%u,\"boot\":%u,\"passes\":%llu,\"pages_checked\":%llu,"
		       "\"pages_retired\":%llu,\"errors\":%llu,\"checksum_ok\":%s",
		       v->id, v->vm->boot_count, (unsigned long long)uc->args[0],
		       (unsigned long long)uc->args[1], (unsigned long long)uc->args[2],
		       (unsigned long long)uc->args[3], uc->args[3] ? "false" : "true");
		v->state = uc->args[3] ? VCPU_FAILED : VCPU_DONE;
		return 1;
	case UCALL_FAIL:
		report("guest_fail",
		       "\"vcpu\":%u,\"reason\":\"%s\",\"vector\":%llu,\"rip\":\"%#llx\","
		       "\"mcg_status\":\"%#llx\",\"mci_status\":\"%#llx\"",
		       v->id, msg, (unsigned long long)uc->args[0], (unsigned long long)uc->args[1],
		       (unsigned long long)uc->args[2], (unsigned long long)uc->args[3]);
		v->state = VCPU_FAILED;
		return 1;
	}
	report("guest_fail", "\"vcpu\":%u,\"reason\":\"unknown ucall %llu\"", v->id,
	       (unsigned long long)uc->cmd);
	return -1;
}

static int handle_exit(struct vcpu *v)
{
	struct kvm_run *run = v->run;

	switch (run->exit_reason) {
	case KVM_EXIT_IO:
		if (run->io.port == UCALL_PORT && run->io.direction == KVM_EXIT_IO_OUT &&
		    run->io.size == 4 && run->io.count == 1)
			return handle_ucall(v);
		report("guest_fail", "\"vcpu\":%u,\"reason\":\"unexpected port I/O %#x\"",
		       v->id, run->io.port);
		return -1;
	case KVM_EXIT_HLT:
		report("guest_fail", "\"vcpu\":%u,\"reason\":\"guest halted without reporting\"",
		       v->id);
		return -1;
	case KVM_EXIT_SHUTDOWN:
		report("guest_fail", "\"vcpu\":%u,\"reason\":\"guest shut down (triple fault)\"",
		       v->id);
		return -1;
	case KVM_EXIT_FAIL_ENTRY:
		report("guest_fail", "\"vcpu\":%u,\"reason\":\"VM entry failed, hw reason %#llx\"",
		       v->id, (unsigned long long)run->fail_entry.hardware_entry_failure_reason);
		return -1;
	case KVM_EXIT_INTERNAL_ERROR:
		report("guest_fail", "\"vcpu\":%u,\"reason\":\"KVM internal error %u\"", v->id,
		       run->internal.suberror);
		return -1;
	}
	report("guest_fail", "\"vcpu\":%u,\"reason\":\"unexpected exit reason %u\"", v->id,
	       run->exit_reason);
	return -1;
}

void *vcpu_thread(void *arg)
{
	struct vcpu *v = arg;
	struct vm *vm = v->vm;
	sigset_t unblock;

	sigbus_bind_thread(&v->sig);
	sigemptyset(&unblock);
	sigaddset(&unblock, SIGBUS);
	sigaddset(&unblock, SIG_VCPU_KICK);
	pthread_sigmask(SIG_UNBLOCK, &unblock, NULL);

	while (v->state == VCPU_RUNNING) {
		int r;

		if (v->sig.ar_pending && handle_action_required(v))
			break;
		if (drain_queue(v))
			break;
		if (vm->stop) {
			v->state = VCPU_STOPPED;
			break;
		}
		v->sig.in_kvm_run = 1;
		r = ioctl(v->fd, KVM_RUN, 0);
		v->sig.in_kvm_run = 0;
		if (r < 0) {
			if (errno == EINTR || errno == EAGAIN) {
				v->run->immediate_exit = 0;
				continue;
			}
			report("guest_fail", "\"vcpu\":%u,\"reason\":\"KVM_RUN: %s\"", v->id,
			       strerror(errno));
			v->state = VCPU_FAILED;
			break;
		}
		r = handle_exit(v);
		if (r < 0)
			v->state = VCPU_FAILED;
	}
	if (v->state == VCPU_FAILED && !vm->stop)
		stop_vm(vm, 0);
	return NULL;
}
