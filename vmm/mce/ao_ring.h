/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The queue from the SIGBUS handler (any thread, async-signal context) to
 * the monitor thread: a bounded lock-free ring with many producers and one
 * consumer. A full ring drops the new event and counts it; it never stops
 * later events from getting through.
 */
#ifndef HWLAB_AO_RING_H
#define HWLAB_AO_RING_H

#include "mce/sigbus.h"

#define AO_RING_LEN 256

struct ao_ring {
	struct {
		struct sigbus_event ev;
		int ready;		/* written by the producer, cleared by the consumer */
	} slot[AO_RING_LEN];
	unsigned long head;		/* next slot a producer claims */
	unsigned long tail;		/* next slot the consumer reads */
	unsigned long dropped;
};

/*
 * Signed: a producer's head may be stale by the time it reads tail (others
 * pushed and the consumer popped meanwhile), so head - tail can be negative.
 * That is not a full ring; the producer's CAS fails on the stale head and it
 * looks again. Unsigned, it wrapped and dropped the event.
 */
static inline int ao_ring_full(unsigned long head, unsigned long tail)
{
	return (long)(head - tail) >= AO_RING_LEN;
}

/* Async-signal-safe. Returns 0, or -1 when the ring was full (counted). */
int ao_ring_push(struct ao_ring *r, const struct sigbus_event *ev);
/* Consumer only. Returns 1 with the oldest event in *ev, 0 when none is ready. */
int ao_ring_pop(struct ao_ring *r, struct sigbus_event *ev);
unsigned long ao_ring_dropped(const struct ao_ring *r);

#endif
