// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include "mce/mce_delivery.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "core/hugetlb_salvage.h"
#include "hwlab_abi.h"
#include "core/report.h"
#include "mce/mce.h"
#include "core/vm.h"

#define DELIVER_DEFERRED 1

void mce_delivery_init_vm(struct vm *vm)
{
	pthread_condattr_t monotonic;

	pthread_mutex_init(&vm->poison.lock, NULL);
	vm->kick_vcpu = mce_delivery_kick;
	/* a wall-clock step must not shorten or stretch the test hook's wait */
	pthread_condattr_init(&monotonic);
	pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
	pthread_cond_init(&vm->poison.ao_handled_cond, &monotonic);
	pthread_condattr_destroy(&monotonic);
}

void mce_delivery_init_vcpu(struct vcpu *v)
{
	pthread_mutex_init(&v->mce.lock, NULL);
}

void mce_delivery_reset_vcpu(struct vcpu *v)
{
	pthread_mutex_lock(&v->mce.lock);
	v->mce.len = 0;
	v->mce.deferred = 0;
	v->mce.closed = 0;
	v->mce.started = 0;
	v->mce.ar_repeats = 0;
	v->mce.last_ar_addr = 0;
	v->mce.last_injected_gpa = 0;
	v->mce.injected = 0;
	v->mce.broadcasts = 0;
	pthread_mutex_unlock(&v->mce.lock);
}

void mce_delivery_thread_started(struct vcpu *v, pthread_t thread)
{
	pthread_mutex_lock(&v->mce.lock);
	v->thread = thread;
	v->mce.started = 1;
	pthread_mutex_unlock(&v->mce.lock);
}

/* Add the extent to one of the VM's lists; returns how many pages were new. */
static int add_to_list(struct vm *vm, struct poison_list *l, const struct gpa_extent *ext)
{
	int added;

	pthread_mutex_lock(&vm->poison.lock);
	added = poison_list_add(l, ext->gpa, ext->len);
	pthread_mutex_unlock(&vm->poison.lock);
	return added;
}

/* Every page the kernel reported poisoned. */
static int record_poison(struct vm *vm, const struct gpa_extent *ext)
{
	return add_to_list(vm, &vm->poison.poisoned, ext);
}

/*
 * Mark the extent as told to the guest; returns how many of its pages were
 * not yet. An AO that races with the guest consuming the same page (AR) must
 * not reach the guest a second time.
 */
static int mark_notified(struct vm *vm, const struct gpa_extent *ext)
{
	return add_to_list(vm, &vm->poison.notified, ext);
}

/* Whether the guest heard of every page of ext. Under poison.lock. */
static int all_notified(struct vm *vm, const struct gpa_extent *ext)
{
	uint64_t page;

	for (page = ext->gpa; page < ext->gpa + ext->len; page += GUEST_PAGE_SIZE)
		if (!poison_list_contains(&vm->poison.notified, page))
			return 0;
	return 1;
}

/*
 * After an injection for one 4 KiB page of a larger lost extent: remember
 * the part of it around that page (mce_spread_window: at most 2 MiB), so
 * that its other pages are told too (mce_spread).
 */
static void spread_add(struct vm *vm, const struct pending_mce *p)
{
	struct gpa_extent w;
	unsigned int i;
	int known = 0;

	/*
	 * Linux guests only: the bare-metal guest with --mce-lsb page retires
	 * each page as it touches it, one AR each, which its test counts.
	 */
	if (!vm->mce_spread || !(vm->mce_style & MCE_STYLE_PAGE_LSB) ||
	    p->ext.len <= GUEST_PAGE_SIZE)
		return;
	w = mce_spread_window(&p->ext, p->mce.addr);
	pthread_mutex_lock(&vm->poison.lock);
	for (i = 0; i < MAX_SPREADS; i++)
		known |= vm->poison.spread[i].end && vm->poison.spread[i].gpa == w.gpa;
	/*
	 * Or told already, by an earlier spread: an AR for a page the guest has
	 * not yet taken from its bank comes after the spread ended.
	 */
	if (!known)
		known = all_notified(vm, &w);
	for (i = 0; i < MAX_SPREADS && !known; i++)
		if (!vm->poison.spread[i].end) {
			vm->poison.spread[i] = (struct mce_spread) {
				.gpa = w.gpa, .end = w.gpa + w.len,
				.next = w.gpa, .t_start = monotonic_ns(),
			};
			__atomic_fetch_add(&vm->poison.spreads_active, 1, __ATOMIC_RELEASE);
			report("poison_spread", "\"gpa\":\"%#llx\",\"pages\":%llu,"
			       "\"extent_gpa\":\"%#llx\",\"extent_pages\":%llu,"
			       "\"status\":\"telling\",\"reason\":\"the host lost the whole extent; "
			       "the guest takes 4 KiB machine checks: one AO per page%s\"",
			       (unsigned long long)w.gpa, (unsigned long long)(w.len / GUEST_PAGE_SIZE),
			       (unsigned long long)p->ext.gpa,
			       (unsigned long long)(p->ext.len / GUEST_PAGE_SIZE),
			       w.len < p->ext.len ? ", for the 2 MiB around the page told; the rest "
			       "as the guest touches it" : "");
			break;
		}
	pthread_mutex_unlock(&vm->poison.lock);
	if (!known && i == MAX_SPREADS)
		report("poison_spread", "\"gpa\":\"%#llx\",\"pages\":%llu,\"status\":\"dropped\","
		       "\"reason\":\"more than %d huge pages being told at once\"",
		       (unsigned long long)w.gpa,
		       (unsigned long long)(w.len / GUEST_PAGE_SIZE), MAX_SPREADS);
}

/*
 * MCA broadcast: an #MC that v takes reaches every other vCPU too, as bank
 * 1 VAL|UC without EN. A Linux guest's handler on the first CPU waits for
 * all of them (mce_start()) and panics when they do not come.
 */
static void broadcast_mce(struct vcpu *v)
{
	struct vm *vm = v->vm;
	unsigned int i;

	if (!(vm->mce_style & MCE_STYLE_BROADCAST))
		return;
	for (i = 0; i < vm->opt->nr_vcpus; i++) {
		struct vcpu *o = &vm->vcpus[i];

		if (o == v)
			continue;
		pthread_mutex_lock(&o->mce.lock);
		if (!o->mce.closed) {
			o->mce.broadcasts++;
			o->mce.broadcast_origin = v->id;
			if (o->mce.started)
				pthread_kill(o->thread, SIG_VCPU_KICK);
		}
		pthread_mutex_unlock(&o->mce.lock);
	}
}

/* Another vCPU's #MC, passed on; several that came since one exit are one. */
static int deliver_broadcast(struct vcpu *v)
{
	struct kvm_x86_mce mce;
	enum mce_guest_state state;
	unsigned int n, origin;

	pthread_mutex_lock(&v->mce.lock);
	n = v->mce.broadcasts;
	origin = v->mce.broadcast_origin;
	v->mce.broadcasts = 0;
	pthread_mutex_unlock(&v->mce.lock);
	if (!n)
		return 0;
	mce_encode_broadcast(&mce);
	state = mce_guest_state(v);
	if (state != MCE_GUEST_READY) {
		/* already in an #MC (its own, which has it in the rendezvous), or none */
		report("mce_broadcast", "\"vcpu\":%u,\"origin_vcpu\":%u,\"count\":%u,"
		       "\"action\":\"ignore\",\"reason\":\"%s\"", v->id, origin, n,
		       mce_guest_state_reason(state));
		return 0;
	}
	if (mce_inject(v, &mce)) {
		report("mce_broadcast", "\"vcpu\":%u,\"origin_vcpu\":%u,\"count\":%u,"
		       "\"action\":\"fatal\",\"reason\":\"KVM_X86_SET_MCE: %s\"", v->id, origin, n,
		       strerror(errno));
		v->state = VCPU_FAILED;
		vm_stop(v->vm, 0);
		return -1;
	}
	report("mce_broadcast", "\"vcpu\":%u,\"origin_vcpu\":%u,\"count\":%u,\"action\":\"inject\","
	       "\"bank\":%u,\"mci_status\":\"%#llx\",\"mcg_status\":\"%#llx\"", v->id, origin, n,
	       mce.bank, (unsigned long long)mce.status, (unsigned long long)mce.mcg_status);
	return 0;
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
	 * extent is told page by page afterwards (spread_add).
	 */
	struct gpa_extent told = p->ext;

	if ((v->vm->mce_style & MCE_STYLE_PAGE_LSB) && told.len > GUEST_PAGE_SIZE) {
		told.gpa = p->mce.addr;
		told.len = GUEST_PAGE_SIZE;
	}

	if (ao && state == MCE_GUEST_IN_MCE)
		return DELIVER_DEFERRED;	/* one machine check at a time */
	/*
	 * An AMD deferred error only sits in its bank until the guest's poll
	 * reads and clears it; writing another over it would lose the first.
	 * It waits for a free bank.
	 */
	if (ao && state == MCE_GUEST_READY && !(p->mce.status & MCI_STATUS_UC)) {
		int bank = mce_pick_deferred_bank(mce_free_banks(v, HWLAB_MCE_DEFERRED_BANKS));

		if (bank < 0)
			return DELIVER_DEFERRED;
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
	v->mce.last_injected_gpa = p->mce.addr;
	v->mce.injected = 1;
	__atomic_fetch_add(&v->vm->poison.injected, 1, __ATOMIC_RELAXED);
	mce_event_report(v->id, p, "inject", NULL);
	if (p->mce.status & MCI_STATUS_UC)
		broadcast_mce(v);
	spread_add(v->vm, p);
	return 0;
}

/*
 * The next untold page of a lost extent, as an AO for this vCPU, when the
 * guest can take one now; 0 if there is none to tell now.
 */
static int spread_take(struct vcpu *v, struct pending_mce *p)
{
	struct vm *vm = v->vm;
	struct sigbus_event ev = { .code = BUS_MCEERR_AO, .lsb = 12 };
	unsigned int i;
	int found = 0;

	pthread_mutex_lock(&vm->poison.lock);
	for (i = 0; i < MAX_SPREADS && !found; i++) {
		struct mce_spread *sp = &vm->poison.spread[i];

		while (sp->end && sp->next < sp->end && !found) {
			uint64_t page = sp->next;
			const struct memslot *s = memslot_find_gpa(&vm->mem, page);

			sp->next += GUEST_PAGE_SIZE;
			/* a page the guest heard of already (the AR that began it) */
			if (poison_list_add(&vm->poison.notified, page, GUEST_PAGE_SIZE) == 0)
				continue;
			sp->told++;
			found = 1;
			ev.addr = (uintptr_t)s->hva + (page - s->gpa);
		}
		if (sp->end && sp->next >= sp->end) {
			report("poison_spread", "\"gpa\":\"%#llx\",\"pages\":%llu,\"told\":%lu,"
			       "\"status\":\"done\",\"duration_ns\":%llu",
			       (unsigned long long)sp->gpa,
			       (unsigned long long)((sp->end - sp->gpa) / GUEST_PAGE_SIZE), sp->told,
			       (unsigned long long)(monotonic_ns() - sp->t_start));
			sp->end = 0;
			__atomic_fetch_sub(&vm->poison.spreads_active, 1, __ATOMIC_RELEASE);
		}
	}
	pthread_mutex_unlock(&vm->poison.lock);
	if (!found)
		return 0;
	/* as if the kernel had sent an AO for that one page: the same encoding */
	ev.t_ns = monotonic_ns();
	return mce_event_prepare(&vm->mem, vm->mce_style, &ev, p) == 0;
}

/*
 * Tell the guest more pages of a lost extent, if it can take them now: with
 * Intel's encoding one #MC per exit (no machine check in progress), with
 * AMD's a deferred error in every bank the guest's poll has emptied.
 */
static int deliver_spread(struct vcpu *v)
{
	struct pending_mce p;
	unsigned int free_mask = 1;
	int amd = v->vm->mce_style & MCE_STYLE_AMD;

	if (!__atomic_load_n(&v->vm->poison.spreads_active, __ATOMIC_ACQUIRE))
		return 0;
	if (mce_guest_state(v) != MCE_GUEST_READY)
		return 0;
	if (amd)
		free_mask = mce_free_banks(v, HWLAB_MCE_DEFERRED_BANKS);
	while (free_mask && spread_take(v, &p)) {
		if (amd) {
			p.mce.bank = mce_pick_deferred_bank(free_mask);
			free_mask &= ~(1u << p.mce.bank);
		} else {
			free_mask = 0;
		}
		if (mce_inject(v, &p.mce))
			return stop_vcpu(v, &p, "fatal", "KVM_X86_SET_MCE failed for a page of a lost "
					 "huge page", 0);
		__atomic_fetch_add(&v->vm->poison.injected, 1, __ATOMIC_RELAXED);
		if (p.mce.status & MCI_STATUS_UC)
			broadcast_mce(v);
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

/* q: ev as the kernel would send it for the 4 KiB page at gpa of slot s (LSB 12) */
static int prepare_page(struct vm *vm, const struct memslot *s, const struct sigbus_event *ev,
			uint64_t gpa, struct pending_mce *q)
{
	struct sigbus_event page_ev = *ev;

	page_ev.addr = (uintptr_t)s->hva + (gpa - s->gpa);
	page_ev.lsb = 12;
	return mce_event_prepare(&vm->mem, vm->mce_style, &page_ev, q);
}

static enum salvaged salvage_extent(struct vm *vm, struct pending_mce *p,
				    struct salvage_result *r)
{
	const struct memslot *s = p->ext.slot;
	uint64_t gpa;

	if (!hugetlb_salvage_possible(s) || hugetlb_salvage(s, p->ext.gpa, r))
		return SALVAGED_NONE;
	gpa = s->gpa + ((p->ev.addr - (uintptr_t)s->hva) & ~(GUEST_PAGE_SIZE - 1));
	if (prepare_page(vm, s, &p->ev, gpa, p) < 0)
		return SALVAGED_NONE;	/* cannot be: the page is in s */
	return hugetlb_salvage_page_bad(r, gpa) ? SALVAGED_BAD : SALVAGED_HEALTHY;
}

/* An AR that the SIGBUS handler recorded while this thread was in KVM_RUN. */
static int deliver_action_required(struct vcpu *v)
{
	struct pending_mce p;
	struct salvage_result r;

	v->sig.ar_pending = 0;
	if (mce_event_prepare(&v->vm->mem, v->vm->mce_style, &v->sig.ar, &p) < 0)
		return stop_vcpu(v, &p, "fatal", "poison consumed outside guest RAM", 0);
	if (salvage_extent(v->vm, &p, &r) == SALVAGED_HEALTHY) {
		/*
		 * The guest touched a subpage that was read back: its access
		 * now finds the data. The bad subpages are poisoned again and
		 * an access to one is an AR of its own. Counted as a repeat
		 * like any AR: one that keeps coming for a page said healthy
		 * stops the vCPU instead of spinning.
		 */
		v->mce.ar_repeats = p.ev.addr == v->mce.last_ar_addr ? v->mce.ar_repeats + 1 : 0;
		v->mce.last_ar_addr = p.ev.addr;
		if (v->mce.ar_repeats >= AR_REPEAT_LIMIT)
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
	v->mce.ar_repeats = p.ev.addr == v->mce.last_ar_addr ? v->mce.ar_repeats + 1 : 0;
	v->mce.last_ar_addr = p.ev.addr;
	if (v->mce.ar_repeats >= AR_REPEAT_LIMIT)
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

	pthread_mutex_lock(&v->mce.lock);
	n = v->mce.len;
	memcpy(local, v->mce.queue, n * sizeof(local[0]));
	pthread_mutex_unlock(&v->mce.lock);
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
	pthread_mutex_lock(&v->mce.lock);
	memmove(v->mce.queue + kept, v->mce.queue + n, (v->mce.len - n) * sizeof(v->mce.queue[0]));
	memcpy(v->mce.queue, local, kept * sizeof(local[0]));
	v->mce.len = kept + (v->mce.len - n);
	v->mce.deferred = stopping ? 0 : kept;
	pthread_mutex_unlock(&v->mce.lock);
	return stopping ? -1 : 0;
}

int mce_delivery_run_pending(struct vcpu *v)
{
	/*
	 * Its own AR first: a broadcast injected before it would leave MCIP
	 * set, and the AR would find the guest busy. A broadcast that finds
	 * this vCPU in its own #MC has it in the rendezvous already.
	 */
	if (v->sig.ar_pending && deliver_action_required(v))
		return -1;
	if (deliver_broadcast(v))
		return -1;
	if (deliver_queued(v))
		return -1;
	return deliver_spread(v);
}

enum queue_result {
	QUEUED,
	QUEUE_FULL,		/* of AOs the vCPU has not taken yet: a burst outran it */
	QUEUE_FULL_DEFERRED,	/* and it holds some back: the guest is in a machine check */
	VCPU_CLOSED,
};

/* Queue an injection for v and kick it out of KVM_RUN. */
static enum queue_result queue_for_vcpu(struct vcpu *v, const struct pending_mce *p)
{
	pthread_mutex_lock(&v->mce.lock);
	if (v->mce.closed) {
		pthread_mutex_unlock(&v->mce.lock);
		return VCPU_CLOSED;
	}
	if (v->mce.len >= MCE_QUEUE_LEN) {
		enum queue_result r = v->mce.deferred ? QUEUE_FULL_DEFERRED : QUEUE_FULL;

		pthread_mutex_unlock(&v->mce.lock);
		return r;
	}
	v->mce.queue[v->mce.len++] = *p;
	/*
	 * Under the lock: started and not closed means a thread that exists
	 * and has not been joined. A thread not started yet finds the entry at
	 * the top of its loop.
	 */
	if (v->mce.started)
		pthread_kill(v->thread, SIG_VCPU_KICK);
	pthread_mutex_unlock(&v->mce.lock);
	return QUEUED;
}

/* An AO that reached no vCPU: the page stays isolated, the guest is not told. */
static void not_delivered(struct vm *vm, int vcpu_id, const struct pending_mce *p,
			  const char *why)
{
	__atomic_fetch_add(&vm->poison.not_delivered, 1, __ATOMIC_RELAXED);
	mce_event_report(vcpu_id, p, "ignore", why);
}

/*
 * Hand an AO to the first vCPU that still runs (vCPU 0 while it does, as
 * QEMU sends AO to its first CPU), skipping except. A machine check for a
 * page is for the whole guest: any running vCPU can take it.
 */
static void queue_on_running_vcpu(struct vm *vm, const struct pending_mce *p,
				  const struct vcpu *except)
{
	unsigned int i, full = 0, deferred = 0;

	for (i = 0; i < vm->opt->nr_vcpus; i++) {
		struct vcpu *v = &vm->vcpus[i];
		enum queue_result r;

		if (v == except)
			continue;
		r = queue_for_vcpu(v, p);
		if (r == QUEUED)
			return;
		full += r == QUEUE_FULL;
		deferred += r == QUEUE_FULL_DEFERRED;
	}
	/*
	 * Which one it is matters to whoever reads the log: a guest stuck in a
	 * machine check, or more AOs at once than the queues hold.
	 */
	if (deferred)
		not_delivered(vm, MCE_EVENT_NO_VCPU, p, "not delivered: every running vCPU's "
			      "injection queue is full (the guest has not finished its machine "
			      "checks)");
	else if (full)
		not_delivered(vm, MCE_EVENT_NO_VCPU, p, "not delivered: every running vCPU's "
			      "injection queue is full (a burst of AOs outran delivery)");
	else
		not_delivered(vm, MCE_EVENT_NO_VCPU, p, "not delivered: no vCPU is running");
}

/*
 * An AO for a huge extent that was salvaged: the subpages that stay
 * poisoned are the AOs, one each, as the kernel would send them for 4 KiB
 * pages. The salvage's own poison markers also send AOs (the VMM is early
 * kill); those find the pages known already.
 */
static void action_optional_salvaged(struct vm *vm, struct pending_mce *p,
				     const struct salvage_result *r)
{
	const struct memslot *s = p->ext.slot;
	uint64_t gpa;

	for (gpa = r->gpa; gpa < r->gpa + SALVAGE_UNIT; gpa += GUEST_PAGE_SIZE) {
		struct pending_mce q;

		if (!hugetlb_salvage_page_bad(r, gpa) || prepare_page(vm, s, &p->ev, gpa, &q) < 0)
			continue;
		if (record_poison(vm, &q.ext) == 0) {
			mce_event_report(MCE_EVENT_NO_VCPU, &q, "ignore",
					 "page already known to be poisoned");
			continue;
		}
		q.t_queued = monotonic_ns();
		queue_on_running_vcpu(vm, &q, NULL);
	}
}

void mce_delivery_action_optional(struct vm *vm, const struct sigbus_event *ev)
{
	struct pending_mce p;
	struct salvage_result r;
	uint64_t marker;

	if (mce_event_prepare(&vm->mem, vm->mce_style, ev, &p) < 0) {
		marker = hugetlb_salvage_marker_gpa(ev->addr);
		if (marker) {
			char why[160];

			snprintf(why, sizeof(why), "the poison marker a salvage made for GPA %#llx "
				 "before moving it into guest RAM", (unsigned long long)marker);
			mce_event_report(MCE_EVENT_NO_VCPU, &p, "ignore", why);
		} else {
			mce_event_report(MCE_EVENT_NO_VCPU, &p, "ignore",
					 "poisoned page outside guest RAM (VMM memory)");
		}
	} else if (hugetlb_salvage_possible(p.ext.slot) &&
		   !hugetlb_salvage(p.ext.slot, p.ext.gpa, &r)) {
		action_optional_salvaged(vm, &p, &r);
	} else if (record_poison(vm, &p.ext) == 0)
		mce_event_report(MCE_EVENT_NO_VCPU, &p, "ignore",
				 "page already known to be poisoned");
	else {
		p.t_queued = monotonic_ns();
		queue_on_running_vcpu(vm, &p, NULL);
	}
	pthread_mutex_lock(&vm->poison.lock);
	vm->poison.ao_handled++;
	pthread_cond_broadcast(&vm->poison.ao_handled_cond);
	pthread_mutex_unlock(&vm->poison.lock);
}

int mce_delivery_kick(struct vcpu *v, int only_if_queued)
{
	int kicked = 0;

	pthread_mutex_lock(&v->mce.lock);
	if (v->mce.started && !v->mce.closed &&
	    (!only_if_queued || v->mce.len ||
	     __atomic_load_n(&v->vm->poison.spreads_active, __ATOMIC_ACQUIRE))) {
		pthread_kill(v->thread, SIG_VCPU_KICK);
		kicked = 1;
	}
	pthread_mutex_unlock(&v->mce.lock);
	return kicked;
}

void mce_delivery_close_vcpu(struct vcpu *v)
{
	struct pending_mce left[MCE_QUEUE_LEN];
	unsigned int n, i;

	pthread_mutex_lock(&v->mce.lock);
	v->mce.closed = 1;
	n = v->mce.len;
	memcpy(left, v->mce.queue, n * sizeof(left[0]));
	v->mce.len = 0;
	pthread_mutex_unlock(&v->mce.lock);
	for (i = 0; i < n; i++) {
		if (v->vm->stop)
			not_delivered(v->vm, v->id, &left[i], "not delivered: the VM stopped first");
		else
			queue_on_running_vcpu(v->vm, &left[i], v);
	}
}

unsigned long mce_delivery_ao_handled(struct vm *vm)
{
	unsigned long n;

	pthread_mutex_lock(&vm->poison.lock);
	n = vm->poison.ao_handled;
	pthread_mutex_unlock(&vm->poison.lock);
	return n;
}

void mce_delivery_wait_ao_handled(struct vm *vm, unsigned long want, unsigned int timeout_s)
{
	struct timespec deadline;

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += timeout_s;
	pthread_mutex_lock(&vm->poison.lock);
	while (vm->poison.ao_handled < want &&
	       pthread_cond_timedwait(&vm->poison.ao_handled_cond, &vm->poison.lock,
				      &deadline) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&vm->poison.lock);
}

unsigned int mce_delivery_poisoned_pages(struct vm *vm)
{
	unsigned int n;

	pthread_mutex_lock(&vm->poison.lock);
	n = vm->poison.poisoned.count;
	pthread_mutex_unlock(&vm->poison.lock);
	return n;
}

unsigned long mce_delivery_injected(struct vm *vm)
{
	return __atomic_load_n(&vm->poison.injected, __ATOMIC_RELAXED);
}

unsigned long mce_delivery_not_delivered(struct vm *vm)
{
	return __atomic_load_n(&vm->poison.not_delivered, __ATOMIC_RELAXED);
}

void mce_delivery_forget_poison(struct vm *vm, struct poison_list *out)
{
	pthread_mutex_lock(&vm->poison.lock);
	*out = vm->poison.poisoned;
	memset(&vm->poison.poisoned, 0, sizeof(vm->poison.poisoned));
	poison_list_clear(&vm->poison.notified);
	pthread_mutex_unlock(&vm->poison.lock);
}
