// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include "mce/mce_delivery.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "core/hugetlb_salvage.h"
#include "hwlab_abi.h"
#include "log.h"
#include "core/report.h"
#include "mce/broadcast.h"
#include "mce/mce.h"
#include "mce/smca_kvm.h"
#include "core/vm.h"

#define DELIVER_DEFERRED 1

int mce_delivery_init_vm(struct vm *vm)
{
	pthread_condattr_t monotonic;

	vm->poison = calloc(1, sizeof(*vm->poison));
	if (!vm->poison) {
		pr_err("out of memory for the VM's machine-check state");
		return -1;
	}
	pthread_mutex_init(&vm->poison->lock, NULL);
	vm->poison->spread_vcpu = -1;
	/* a wall-clock step must not shorten or stretch the test hook's wait */
	pthread_condattr_init(&monotonic);
	pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
	pthread_cond_init(&vm->poison->ao_handled_cond, &monotonic);
	pthread_condattr_destroy(&monotonic);
	return 0;
}

int mce_delivery_init_vcpu(struct vcpu *v)
{
	v->mce = calloc(1, sizeof(*v->mce));
	if (!v->mce) {
		pr_err("out of memory for vCPU %u's machine-check state", v->id);
		return -1;
	}
	smca_vcpu_reset(&v->mce->smca, v->vm->mce_banks);
	v->mce->blocking.fd = -1;
	return 0;
}

void mce_delivery_reset_vcpu(struct vcpu *v)
{
	ao_queue_reset(&v->mce->queue, &v->thread);
	pthread_mutex_lock(&v->thread.lock);
	v->mce->ar_repeats = 0;
	v->mce->last_ar_addr = 0;
	v->mce->last_injected_gpa = 0;
	v->mce->injected = 0;
	v->mce->broadcasts = 0;
	pthread_mutex_unlock(&v->thread.lock);
	/* the vCPU thread's own: no lock */
	smca_vcpu_reset(&v->mce->smca, v->vm->mce_banks);
	v->mce->dfr_raise = 0;
	v->mce->spread_batch_ns = 0;
}

/* Every page the kernel reported poisoned: guest memory's list. */
static int record_poison(struct vm *vm, const struct gpa_extent *ext)
{
	return guest_poison_add(&vm->poisoned, ext->gpa, ext->len);
}

/*
 * Mark the extent as told to the guest; returns how many of its pages were
 * not yet. An AO that races with the guest consuming the same page (AR) must
 * not reach the guest a second time.
 */
static int mark_notified(struct vm *vm, const struct gpa_extent *ext)
{
	int added;

	pthread_mutex_lock(&vm->poison->lock);
	added = poison_list_add(&vm->poison->notified, ext->gpa, ext->len);
	pthread_mutex_unlock(&vm->poison->lock);
	return added;
}

/* The one way a delivery ends the run: report why, fail this vCPU, stop the VM. */
static int stop_vcpu(struct vcpu *v, const struct pending_mce *p, const char *action,
		     const char *reason, int reset)
{
	mce_event_report(v->id, p, action, reason);
	v->state = VCPU_FAILED;
	vm_stop(v->vm, reset);
	return -1;
}

/*
 * Returns 0 if the vCPU may go on running, DELIVER_DEFERRED for an AO that
 * must wait until the guest has finished its current machine check (retried
 * at the next exit), or -1 when the VM is stopping.
 */
static int deliver(struct vcpu *v, struct pending_mce *p)
{
	enum mce_guest_state state = mce_guest_state(v);
	const char *why = mce_guest_state_reason(state);
	int ao = p->ev.code == BUS_MCEERR_AO;
	/*
	 * What this machine check tells the guest: the extent, or with 4 KiB
	 * granularity (Linux) only the page it names; the rest of a huge
	 * extent is told page by page afterwards (mce_spread_add).
	 */
	struct gpa_extent told = p->ext;

	if ((v->vm->mce_style & MCE_STYLE_PAGE_LSB) && told.len > GUEST_PAGE_SIZE) {
		told.gpa = p->mce.addr;
		told.len = GUEST_PAGE_SIZE;
	}

	if (ao && state == MCE_GUEST_IN_MCE) {
		p->held_why = AO_HELD_IN_MCE;
		return DELIVER_DEFERRED;	/* one machine check at a time */
	}
	/*
	 * An AMD deferred error only sits in its bank until the guest's poll
	 * reads and clears it; writing another over it would lose the first.
	 * It waits for a free bank.
	 */
	if (ao && state == MCE_GUEST_READY && !(p->mce.status & MCI_STATUS_UC)) {
		int bank = mce_pick_deferred_bank(mce_free_banks(v, mce_deferred_banks(v->vm->mce_banks)));

		if (bank < 0) {
			/*
			 * Bounded by the vCPU's queue (MCE_QUEUE_LEN): a guest
			 * that never reads its banks (no poll, its interrupt
			 * masked) has the AOs past it refused, and those
			 * waiting reported when the VM stops, each saying why.
			 */
			p->held_why = AO_HELD_NO_BANK;
			return DELIVER_DEFERRED;
		}
		p->mce.bank = bank;
	}
	if (ao && state == MCE_GUEST_READY && mark_notified(v->vm, &told) == 0) {
		mce_event_report(v->id, p, "ignore",
				 "guest already got a machine check for this page");
		return 0;
	}
	if (!ao)
		mark_notified(v->vm, &told);

	if (ao && state == MCE_GUEST_NO_MCE) {
		/* Nothing consumed the poison yet: keep it isolated, tell no one. */
		mce_event_report(v->id, p, "ignore", why);
		return 0;
	}
	if (state != MCE_GUEST_READY) {
		const struct vmm_options *opt = v->vm->opt;

		p->recursive = !ao && state == MCE_GUEST_IN_MCE;
		int reset = opt->reset_on_unrecoverable && v->vm->boot_count <= opt->max_resets;

		return stop_vcpu(v, p, reset ? "reset" : "stop", why, reset);
	}
	if (mce_inject(v, &p->mce)) {
		char reason[128];

		snprintf(reason, sizeof(reason), "KVM_X86_SET_MCE: %s", strerror(errno));
		return stop_vcpu(v, p, "fatal", reason, 0);
	}
	v->mce->last_injected_gpa = p->mce.addr;
	v->mce->injected = 1;
	__atomic_fetch_add(&v->vm->poison->injected, 1, __ATOMIC_RELAXED);
	if (p->mce.status & MCI_STATUS_UC)
		p->told = "machine_check";
	else
		smca_tell_deferred(v, p);
	mce_event_report(v->id, p, "inject", NULL);
	if (p->mce.status & MCI_STATUS_UC)
		mce_broadcast_send(v);
	mce_spread_add(v->vm, p);
	return 0;
}

/*
 * Tell the guest more pages of a lost extent, if it can take them now: with
 * Intel's encoding one #MC per exit (no machine check in progress), with
 * AMD's a deferred error in every bank the guest's poll has emptied.
 */
static int deliver_spread(struct vcpu *v)
{
	struct pending_mce p;
	unsigned int free_mask = 1, sent = 0;
	int amd = v->vm->mce_style & MCE_STYLE_AMD;
	int owner, paced = 0, halted = 0;

	if (!__atomic_load_n(&v->vm->poison->spreads_active, __ATOMIC_ACQUIRE)) {
		/* no batch in flight to time: the guest's later exits are not its handler */
		v->mce->smca.t_raised = 0;
		__atomic_store_n(&v->vm->poison->spread_vcpu, -1, __ATOMIC_RELAXED);
		__atomic_store_n(&v->vm->poison->spread_wait_idle, 0, __ATOMIC_RELAXED);
		return 0;
	}
	/* another vCPU's interrupt carries the batch the guest works through */
	owner = __atomic_load_n(&v->vm->poison->spread_vcpu, __ATOMIC_ACQUIRE);
	if (owner >= 0 && owner != (int)v->id)
		return 0;
	if (mce_guest_state(v) != MCE_GUEST_READY)
		return 0;
	if (amd) {
		unsigned int deferred = mce_deferred_banks(v->vm->mce_banks);

		free_mask = mce_free_banks(v, deferred);
		/*
		 * A guest that takes the deferred-error interrupt gets one per
		 * batch: the next batch when it has read and cleared the last
		 * one, not a bank (and an interrupt) at a time as it clears,
		 * and has worked through it (smca_spread_batch_due()).
		 */
		if (v->mce->smca.raised) {
			int ready = smca_spread_batch_ready(v, free_mask == deferred, &halted);

			__atomic_store_n(&v->vm->poison->spread_wait_idle,
					 free_mask == deferred && !ready, __ATOMIC_RELEASE);
			if (!ready)
				return 0;
			paced = 1;
		}
	}
	while (free_mask && mce_spread_take(v, &p)) {
		sent++;
		if (amd) {
			p.mce.bank = mce_pick_deferred_bank(free_mask);
			free_mask &= ~(1u << p.mce.bank);
		} else {
			free_mask = 0;
		}
		if (mce_inject(v, &p.mce))
			return stop_vcpu(v, &p, "fatal", "KVM_X86_SET_MCE failed for a page of a lost "
					 "huge page", 0);
		__atomic_fetch_add(&v->vm->poison->injected, 1, __ATOMIC_RELAXED);
		if (p.mce.status & MCI_STATUS_UC)
			mce_broadcast_send(v);
		else
			smca_tell_deferred(v, &p);
	}
	if (!sent)
		return 0;
	if (paced)
		smca_spread_batch_sent(v, halted);
	/* told by this vCPU's interrupt: the next batch waits for this one */
	if (v->mce->dfr_raise) {
		v->mce->spread_batch_ns = monotonic_ns();
		__atomic_store_n(&v->vm->poison->spread_vcpu, (int)v->id, __ATOMIC_RELEASE);
	} else if (owner == (int)v->id) {
		__atomic_store_n(&v->vm->poison->spread_vcpu, -1, __ATOMIC_RELEASE);
	}
	return 0;
}

/*
 * A poisoned page of hugetlb-shared RAM: salvage its huge page
 * (hugetlb_salvage.h) and, when that worked, make p the 4 KiB page at p's
 * address (its event with LSB 12, encoded again). Whatever si_addr_lsb
 * says: upstream KVM reports a vCPU's access to a lost hugetlb page with
 * lsb 12 (our 0001 makes it 21), yet a hugetlb page is only ever lost
 * whole. A page of a huge page salvaged already finds the first salvage's
 * result (a marker's own AR or AO among them). Returns SALVAGED_NONE when
 * p is unchanged (no salvage here, or it failed: the extent is lost, as
 * before), SALVAGED_BAD when p is now the 4 KiB page and that page stays
 * poisoned, SALVAGED_HEALTHY when the page at p's address was read back; r
 * is the salvage's result for the last two.
 */
enum salvaged { SALVAGED_NONE, SALVAGED_BAD, SALVAGED_HEALTHY };

static enum salvaged salvage_extent(struct vm *vm, struct pending_mce *p,
				    struct salvage_result *r)
{
	const struct memslot *s = p->ext.slot;
	uint64_t gpa;

	if (!hugetlb_salvage_possible(s) || hugetlb_salvage(s, p->ext.gpa, r))
		return SALVAGED_NONE;
	gpa = s->gpa + ((p->ev.addr - (uintptr_t)s->hva) & ~(GUEST_PAGE_SIZE - 1));
	if (mce_event_prepare_page(&vm->mem, vm->mce_style, s, &p->ev, gpa, p) < 0)
		return SALVAGED_NONE;	/* cannot be: the page is in s */
	return hugetlb_salvage_page_bad(r, gpa) ? SALVAGED_BAD : SALVAGED_HEALTHY;
}

/* An AR that the SIGBUS handler recorded while this thread was in KVM_RUN. */
static int deliver_action_required(struct vcpu *v)
{
	struct pending_mce p;
	struct salvage_result r;

	v->sig->ar_pending = 0;
	if (mce_event_prepare(&v->vm->mem, v->vm->mce_style, &v->sig->ar, &p) < 0)
		return stop_vcpu(v, &p, "fatal", "poison consumed outside guest RAM", 0);
	if (salvage_extent(v->vm, &p, &r) == SALVAGED_HEALTHY) {
		/*
		 * The guest touched a subpage that was read back: its access
		 * now finds the data. The bad subpages are poisoned again and
		 * an access to one is an AR of its own. Counted as a repeat
		 * like any AR: one that keeps coming for a page said healthy
		 * stops the vCPU instead of spinning.
		 */
		v->mce->ar_repeats = p.ev.addr == v->mce->last_ar_addr ? v->mce->ar_repeats + 1 : 0;
		v->mce->last_ar_addr = p.ev.addr;
		if (v->mce->ar_repeats >= AR_REPEAT_LIMIT)
			return stop_vcpu(v, &p, "fatal", "an AR kept coming for a page the salvage "
					 "read back", 0);
		mce_event_report(v->id, &p, "ignore", "salvaged: this 4 KiB page of the lost huge "
				 "page was read back; the guest goes on");
		return 0;
	}
	record_poison(v->vm, &p.ext);
	/*
	 * A guest that returns to the access that consumed the poison gets
	 * the same AR forever; so would one told of a different page than the
	 * one it touches. Stop instead of spinning.
	 */
	v->mce->ar_repeats = p.ev.addr == v->mce->last_ar_addr ? v->mce->ar_repeats + 1 : 0;
	v->mce->last_ar_addr = p.ev.addr;
	if (v->mce->ar_repeats >= AR_REPEAT_LIMIT)
		return stop_vcpu(v, &p, "fatal", "guest consumed the same poisoned page again after "
				 "every machine check", 0);
	return deliver(v, &p);
}

/*
 * AO events queued by the monitor thread, and those deferred at the last
 * exit. The entries taken stay counted in len while they are delivered, so
 * that the monitor, appending meanwhile, can never make deferred and new
 * entries together outgrow the queue.
 */
static int deliver_queued(struct vcpu *v)
{
	struct pending_mce local[MCE_QUEUE_LEN];
	unsigned int n, i, kept = 0;
	int stopping = 0;

	n = ao_queue_peek(&v->mce->queue, &v->thread, local);
	if (!n)
		return 0;

	for (i = 0; i < n; i++) {
		int r = deliver(v, &local[i]);

		if (r < 0) {
			/* the VM stops: the rest is reported when the vCPU closes */
			stopping = 1;
			for (i++; i < n; i++)
				local[kept++] = local[i];
			break;
		}
		if (r == DELIVER_DEFERRED)
			local[kept++] = local[i];
	}
	/* queue = deferred entries, then whatever arrived since the copy */
	ao_queue_settle(&v->mce->queue, &v->thread, n, local, kept, stopping);
	return stopping ? -1 : 0;
}

int mce_delivery_run_pending(struct vcpu *v)
{
	/*
	 * Its own AR first: a broadcast injected before it would leave MCIP
	 * set, and the AR would find the guest busy. A broadcast that finds
	 * this vCPU in its own #MC has it in the rendezvous already.
	 */
	if (v->sig->ar_pending && deliver_action_required(v))
		return -1;
	if (mce_broadcast_deliver(v))
		return -1;
	if (deliver_queued(v) || deliver_spread(v))
		return -1;
	smca_raise_pending(v);	/* once for all the banks written above */
	return 0;
}

unsigned long mce_delivery_injected(struct vm *vm)
{
	return __atomic_load_n(&vm->poison->injected, __ATOMIC_RELAXED);
}

int mce_delivery_notified_copy(struct vm *vm, struct poison_list *out)
{
	int r;

	pthread_mutex_lock(&vm->poison->lock);
	r = poison_list_copy(&vm->poison->notified, out);
	pthread_mutex_unlock(&vm->poison->lock);
	return r;
}

int mce_delivery_mark_told(struct vm *vm, uint64_t gpa, uint64_t len)
{
	return mark_notified(vm, &(struct gpa_extent) { .gpa = gpa, .len = len }) < 0 ? -1 : 0;
}

void mce_delivery_forget_notified(struct vm *vm)
{
	pthread_mutex_lock(&vm->poison->lock);
	poison_list_clear(&vm->poison->notified);
	pthread_mutex_unlock(&vm->poison->lock);
}
