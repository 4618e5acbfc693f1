// SPDX-License-Identifier: GPL-2.0
#include "mce/ao_ring.h"

int ao_ring_push(struct ao_ring *r, const struct sigbus_event *ev)
{
	unsigned long head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);

	/*
	 * Claim a slot only while there is room. Advancing head for an event
	 * that is then dropped would leave a slot that never becomes ready,
	 * and the consumer would wait at that gap for ever.
	 */
	do {
		if (ao_ring_full(head, __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE))) {
			__atomic_fetch_add(&r->dropped, 1, __ATOMIC_RELAXED);
			return -1;
		}
	} while (!__atomic_compare_exchange_n(&r->head, &head, head + 1, 0, __ATOMIC_ACQ_REL,
					      __ATOMIC_ACQUIRE));
	r->slot[head % AO_RING_LEN].ev = *ev;
	__atomic_store_n(&r->slot[head % AO_RING_LEN].ready, 1, __ATOMIC_RELEASE);
	return 0;
}

int ao_ring_pop(struct ao_ring *r, struct sigbus_event *ev)
{
	unsigned long tail = r->tail;
	int *ready = &r->slot[tail % AO_RING_LEN].ready;

	/* A claimed slot whose producer has not finished writing: next time. */
	if (!__atomic_load_n(ready, __ATOMIC_ACQUIRE))
		return 0;
	*ev = r->slot[tail % AO_RING_LEN].ev;
	__atomic_store_n(ready, 0, __ATOMIC_RELAXED);
	/* release: the slot is free for a producer only after it was read */
	__atomic_store_n(&r->tail, tail + 1, __ATOMIC_RELEASE);
	return 1;
}

unsigned long ao_ring_dropped(const struct ao_ring *r)
{
	return __atomic_load_n(&r->dropped, __ATOMIC_RELAXED);
}
