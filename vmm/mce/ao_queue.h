/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A vCPU's queue of action-optional machine checks: the monitor thread
 * appends and kicks, the vCPU thread takes them before KVM_RUN and puts
 * back those the guest cannot take yet. It lives under the vCPU thread's
 * lock (core/vcpu_thread.h), which also says whether the thread still
 * takes any: the queue uses that lifecycle without owning it.
 */
#ifndef HWLAB_AO_QUEUE_H
#define HWLAB_AO_QUEUE_H

#include "core/vcpu_thread.h"
#include "mce/mce_event.h"

#define MCE_QUEUE_LEN		32

struct ao_queue {
	struct pending_mce entries[MCE_QUEUE_LEN];
	unsigned int len;
	unsigned int deferred;		/* of them, put back: the guest cannot take them yet */
	const char *deferred_why;	/* why, the last one put back says (held_why) */
};

enum ao_queue_result {
	QUEUED,
	QUEUE_FULL,		/* of AOs the vCPU has not taken yet: a burst outran it */
	QUEUE_FULL_DEFERRED,	/* and it holds some back: the guest cannot take them yet */
	VCPU_CLOSED,
};

/* Nothing queued (a reset vCPU). */
void ao_queue_reset(struct ao_queue *q, struct vcpu_thread *t);
/* The monitor: append p unless t has closed or q is full, and kick t. */
enum ao_queue_result ao_queue_push(struct ao_queue *q, struct vcpu_thread *t,
				   const struct pending_mce *p);
/*
 * The vCPU thread: copy what is queued to out; the entries stay counted in
 * q until ao_queue_settle(), so that the monitor, appending meanwhile, can
 * never make deferred and new entries together outgrow the queue.
 */
unsigned int ao_queue_peek(struct ao_queue *q, struct vcpu_thread *t,
			   struct pending_mce out[MCE_QUEUE_LEN]);
/*
 * After delivering the taken entries of ao_queue_peek(): the queue becomes
 * the nkept put back, then whatever arrived since; stopping: none of them
 * counts as deferred (the VM stops, they are reported at close).
 */
void ao_queue_settle(struct ao_queue *q, struct vcpu_thread *t, unsigned int taken,
		     const struct pending_mce *kept, unsigned int nkept, int stopping);
/*
 * Why q holds AOs back (a full queue's QUEUE_FULL_DEFERRED), as its entries
 * say (pending_mce.held_why), or NULL when it holds none or none says.
 */
const char *ao_queue_deferred_why(struct ao_queue *q, struct vcpu_thread *t);
/* After vcpu_thread_close(): take everything left into out. */
unsigned int ao_queue_drain(struct ao_queue *q, struct vcpu_thread *t,
			    struct pending_mce out[MCE_QUEUE_LEN]);
/* Kick t when q holds AOs, or when more (other work) says so; 1 if kicked. */
int ao_queue_kick_if_queued(struct ao_queue *q, struct vcpu_thread *t, int more);

#endif
