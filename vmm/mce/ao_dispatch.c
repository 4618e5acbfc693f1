// SPDX-License-Identifier: GPL-2.0
/*
 * Which vCPU an action-optional machine check goes to (mce_delivery.h):
 * the monitor thread translates the kernel's AO, salvages or dedupes it
 * against guest memory's poisoned list, and queues it on the first vCPU
 * that still runs; a vCPU that leaves its loop hands its queue on. What
 * the vCPU thread then does with it is mce_delivery.c's.
 */
#define _GNU_SOURCE
#include "mce/mce_delivery.h"
#include "mce/smca_kvm.h"

#include <errno.h>
#include <stdio.h>
#include <time.h>

#include "clock.h"
#include "core/hugetlb_salvage.h"
#include "core/vm.h"

/* An AO that reached no vCPU: the page stays isolated, the guest is not told. */
static void not_delivered(struct vm *vm, int vcpu_id, const struct pending_mce *p,
			  const char *why)
{
	__atomic_fetch_add(&vm->poison->not_delivered, 1, __ATOMIC_RELAXED);
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
	const char *held = NULL;
	char why[192];

	for (i = 0; i < vm->opt->nr_vcpus; i++) {
		struct vcpu *v = &vm->vcpus[i];
		enum ao_queue_result r;

		if (v == except)
			continue;
		r = ao_queue_push(&v->mce->queue, &v->thread, p);
		if (r == QUEUED)
			return;
		full += r == QUEUE_FULL;
		if (r == QUEUE_FULL_DEFERRED) {
			deferred++;
			held = ao_queue_deferred_why(&v->mce->queue, &v->thread);
		}
	}
	/*
	 * Which one it is matters to whoever reads the log: a guest stuck in a
	 * machine check, or more AOs at once than the queues hold.
	 */
	if (deferred) {
		/* held back for a machine check in progress, or for a free bank */
		snprintf(why, sizeof(why), "not delivered: every running vCPU's injection queue "
			 "is full (%s)", held ? held : AO_HELD_IN_MCE);
		not_delivered(vm, MCE_EVENT_NO_VCPU, p, why);
	} else if (full)
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

		if (!hugetlb_salvage_page_bad(r, gpa) || mce_event_prepare_page(&vm->mem, vm->mce_style, s, &p->ev, gpa, &q) < 0)
			continue;
		if (guest_poison_add(&vm->poisoned, q.ext.gpa, q.ext.len) == 0) {
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
	} else if (guest_poison_add(&vm->poisoned, p.ext.gpa, p.ext.len) == 0)
		mce_event_report(MCE_EVENT_NO_VCPU, &p, "ignore",
				 "page already known to be poisoned");
	else {
		p.t_queued = monotonic_ns();
		queue_on_running_vcpu(vm, &p, NULL);
	}
	pthread_mutex_lock(&vm->poison->lock);
	vm->poison->ao_handled++;
	pthread_cond_broadcast(&vm->poison->ao_handled_cond);
	pthread_mutex_unlock(&vm->poison->lock);
}

void mce_delivery_owed_ao(struct vm *vm, uint64_t gpa)
{
	const struct memslot *s = memslot_find_gpa(&vm->mem, gpa);
	struct sigbus_event ev = { .code = BUS_MCEERR_AO, .lsb = 12, .t_ns = monotonic_ns() };
	struct pending_mce q;

	/*
	 * The 4 KiB page alone, never a salvage: this VM's memory there is
	 * healthy (a salvage would find nothing bad and tell nothing).
	 */
	if (!s)
		return;
	ev.addr = (uintptr_t)s->hva + (gpa - s->gpa);
	if (mce_event_prepare_page(&vm->mem, vm->mce_style, s, &ev, gpa, &q) < 0)
		return;
	if (guest_poison_add(&vm->poisoned, q.ext.gpa, q.ext.len) == 0) {
		mce_event_report(MCE_EVENT_NO_VCPU, &q, "ignore", "page already known to be poisoned");
		return;
	}
	q.t_queued = monotonic_ns();
	queue_on_running_vcpu(vm, &q, NULL);
}

int mce_delivery_kick_if_queued(struct vcpu *v)
{
	int more = __atomic_load_n(&v->vm->poison->spreads_active, __ATOMIC_ACQUIRE);
	int waiting = mce_delivery_spreading(v->vm);
	uint64_t now = waiting ? monotonic_ns() : 0, blocking;
	int kicked;

	/*
	 * The guest at work on the last batch: every kick is an exit it pays
	 * for (two a page of console output, under nested TCG), and the batch
	 * would not go yet. Seen blocked in HLT, it is kicked at once.
	 */
	if (waiting && kvm_stat_read(&v->mce->blocking, &blocking) == 0 && !blocking)
		more = now - v->mce->spread_kick_ns >= SPREAD_KICK_BUSY_NS;
	kicked = ao_queue_kick_if_queued(&v->mce->queue, &v->thread, more);
	if (kicked && waiting) {
		v->mce->spread_kick_ns = now;
		/* the monitor's count; the vCPU thread reports it */
		__atomic_fetch_add(&v->mce->spread_kicks, 1, __ATOMIC_RELAXED);
	}
	return kicked;
}

int mce_delivery_spreading(struct vm *vm)
{
	return __atomic_load_n(&vm->poison->spreads_active, __ATOMIC_ACQUIRE) &&
	       __atomic_load_n(&vm->poison->spread_wait_idle, __ATOMIC_ACQUIRE);
}

void mce_delivery_close_vcpu(struct vcpu *v)
{
	struct pending_mce left[MCE_QUEUE_LEN];
	unsigned int n, i;

	smca_report_vcpu(v);
	n = ao_queue_drain(&v->mce->queue, &v->thread, left);
	for (i = 0; i < n; i++) {
		if (v->vm->stop) {
			char why[192];

			/* what it waited for, if it did: the guest that never took it */
			snprintf(why, sizeof(why), "not delivered: the VM stopped first%s%s%s",
				 left[i].held_why ? " (it waited: " : "",
				 left[i].held_why ? left[i].held_why : "", left[i].held_why ? ")" : "");
			not_delivered(v->vm, v->id, &left[i], why);
		} else {
			queue_on_running_vcpu(v->vm, &left[i], v);
		}
	}
}

unsigned long mce_delivery_ao_handled(struct vm *vm)
{
	unsigned long n;

	pthread_mutex_lock(&vm->poison->lock);
	n = vm->poison->ao_handled;
	pthread_mutex_unlock(&vm->poison->lock);
	return n;
}

void mce_delivery_wait_ao_handled(struct vm *vm, unsigned long want, unsigned int timeout_s)
{
	struct timespec deadline;

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += timeout_s;
	pthread_mutex_lock(&vm->poison->lock);
	while (vm->poison->ao_handled < want &&
	       pthread_cond_timedwait(&vm->poison->ao_handled_cond, &vm->poison->lock,
				      &deadline) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&vm->poison->lock);
}

unsigned long mce_delivery_not_delivered(struct vm *vm)
{
	return __atomic_load_n(&vm->poison->not_delivered, __ATOMIC_RELAXED);
}

