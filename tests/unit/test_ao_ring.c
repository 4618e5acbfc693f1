// SPDX-License-Identifier: GPL-2.0
/* The SIGBUS handler -> monitor ring: bursts are counted and never stall it. */
#include <signal.h>

#include "mce/ao_ring.h"
#include "unit.h"

static struct ao_ring ring;

static unsigned int push_n(unsigned long first, unsigned int n)
{
	unsigned int i, ok = 0;

	for (i = 0; i < n; i++) {
		struct sigbus_event ev = { .code = BUS_MCEERR_AO, .addr = first + i };

		ok += ao_ring_push(&ring, &ev) == 0;
	}
	return ok;
}

UNIT_TEST(ao_ring, "SIGBUS event ring")
{
	struct sigbus_event ev;
	unsigned long want = 0, got = 0, in_order = 1;
	unsigned int i;

	/* a burst of 257 while nobody reads: 256 kept, 1 counted as dropped */
	CHECK_EQ(push_n(0, AO_RING_LEN + 1), AO_RING_LEN);
	CHECK_EQ(ao_ring_dropped(&ring), 1);
	while (ao_ring_pop(&ring, &ev)) {
		in_order &= ev.addr == want++;
		got++;
	}
	CHECK_EQ(got, AO_RING_LEN);
	CHECK(in_order, "events come out in the order they went in");

	/* after the burst, 310 more with the reader keeping up: every one arrives */
	got = 0;
	for (i = 0; i < 310; i++) {
		CHECK_EQ(push_n(1000 + i, 1), 1);
		if (ao_ring_pop(&ring, &ev) && ev.addr == 1000 + i)
			got++;
	}
	CHECK_EQ(got, 310);
	CHECK_EQ(ao_ring_dropped(&ring), 1);
	CHECK(!ao_ring_pop(&ring, &ev), "nothing left over");

	/* a second overflow is counted exactly, and the ring still works after it */
	CHECK_EQ(push_n(5000, AO_RING_LEN + 40), AO_RING_LEN);
	CHECK_EQ(ao_ring_dropped(&ring), 41);
	for (got = 0; ao_ring_pop(&ring, &ev); got++)
		;
	CHECK_EQ(got, AO_RING_LEN);
	CHECK_EQ(push_n(9000, 1), 1);
	CHECK(ao_ring_pop(&ring, &ev) && ev.addr == 9000, "the event after two bursts arrives");

	/* a stale head behind tail is not a full ring */
	CHECK(!ao_ring_full(100, 101), "head one behind tail: not full");
	CHECK(!ao_ring_full(0, 5), "head five behind tail: not full");
	CHECK(!ao_ring_full(300, 45), "255 in the ring: not full");
	CHECK(ao_ring_full(301, 45), "256 in the ring: full");
}

/*
 * Producers on several threads (handlers on the vCPU threads and the main
 * thread) and the consumer at once, the ring never more than a few entries
 * full: nothing may be dropped. A head read before another producer's push
 * and the consumer's pop made head - tail wrap and counted a drop.
 */
#include <pthread.h>
#include <sched.h>

#define MP_PRODUCERS	3
#define MP_EACH		20000

static struct ao_ring mp_ring;
static volatile int mp_done;

static void *mp_produce(void *arg)
{
	unsigned long id = (unsigned long)arg, i;

	for (i = 0; i < MP_EACH; i++) {
		struct sigbus_event ev = { .code = BUS_MCEERR_AO, .addr = id << 32 | i };

		/* keep the ring nearly empty: any drop then is a miscount */
		while ((long)(__atomic_load_n(&mp_ring.head, __ATOMIC_ACQUIRE) -
			      __atomic_load_n(&mp_ring.tail, __ATOMIC_ACQUIRE)) > 8)
			sched_yield();
		if (ao_ring_push(&mp_ring, &ev))
			i--;	/* counted as dropped; the check below fails */
	}
	return NULL;
}

UNIT_TEST(ao_ring_threads, "SIGBUS event ring, several producers")
{
	pthread_t t[MP_PRODUCERS];
	unsigned long got = 0, next[MP_PRODUCERS] = { 0 }, in_order = 1, i;
	struct sigbus_event ev;

	for (i = 0; i < MP_PRODUCERS; i++)
		pthread_create(&t[i], NULL, mp_produce, (void *)i);
	while (got < MP_PRODUCERS * MP_EACH) {
		if (!ao_ring_pop(&mp_ring, &ev))
			continue;
		in_order &= (ev.addr & 0xffffffff) == next[ev.addr >> 32]++;
		got++;
	}
	for (i = 0; i < MP_PRODUCERS; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ(got, MP_PRODUCERS * MP_EACH);
	CHECK_EQ(ao_ring_dropped(&mp_ring), 0);
	CHECK(in_order, "each producer's events arrive in its order");
}
