// SPDX-License-Identifier: GPL-2.0
#include "mce/ao_queue.h"

#include <string.h>

void ao_queue_reset(struct ao_queue *q, struct vcpu_thread *t)
{
	pthread_mutex_lock(&t->lock);
	q->len = 0;
	q->deferred = 0;
	q->deferred_why = NULL;
	pthread_mutex_unlock(&t->lock);
}

enum ao_queue_result ao_queue_push(struct ao_queue *q, struct vcpu_thread *t,
				   const struct pending_mce *p)
{
	enum ao_queue_result r = QUEUED;

	pthread_mutex_lock(&t->lock);
	if (t->closed) {
		r = VCPU_CLOSED;
	} else if (q->len >= MCE_QUEUE_LEN) {
		r = q->deferred ? QUEUE_FULL_DEFERRED : QUEUE_FULL;
	} else {
		q->entries[q->len++] = *p;
		vcpu_thread_kick_locked(t);
	}
	pthread_mutex_unlock(&t->lock);
	return r;
}

unsigned int ao_queue_peek(struct ao_queue *q, struct vcpu_thread *t,
			   struct pending_mce out[MCE_QUEUE_LEN])
{
	unsigned int n;

	pthread_mutex_lock(&t->lock);
	n = q->len;
	memcpy(out, q->entries, n * sizeof(out[0]));
	pthread_mutex_unlock(&t->lock);
	return n;
}

void ao_queue_settle(struct ao_queue *q, struct vcpu_thread *t, unsigned int taken,
		     const struct pending_mce *kept, unsigned int nkept, int stopping)
{
	pthread_mutex_lock(&t->lock);
	memmove(q->entries + nkept, q->entries + taken, (q->len - taken) * sizeof(q->entries[0]));
	memcpy(q->entries, kept, nkept * sizeof(kept[0]));
	q->len = nkept + (q->len - taken);
	q->deferred = stopping ? 0 : nkept;
	q->deferred_why = q->deferred ? kept[nkept - 1].held_why : NULL;
	pthread_mutex_unlock(&t->lock);
}

const char *ao_queue_deferred_why(struct ao_queue *q, struct vcpu_thread *t)
{
	const char *why;

	pthread_mutex_lock(&t->lock);
	why = q->deferred ? q->deferred_why : NULL;
	pthread_mutex_unlock(&t->lock);
	return why;
}

unsigned int ao_queue_drain(struct ao_queue *q, struct vcpu_thread *t,
			    struct pending_mce out[MCE_QUEUE_LEN])
{
	unsigned int n;

	pthread_mutex_lock(&t->lock);
	n = q->len;
	memcpy(out, q->entries, n * sizeof(out[0]));
	q->len = 0;
	pthread_mutex_unlock(&t->lock);
	return n;
}

int ao_queue_kick_if_queued(struct ao_queue *q, struct vcpu_thread *t, int more)
{
	int kicked = 0;

	pthread_mutex_lock(&t->lock);
	if (q->len || more)
		kicked = vcpu_thread_kick_locked(t);
	pthread_mutex_unlock(&t->lock);
	return kicked;
}
