// SPDX-License-Identifier: GPL-2.0
/* The SIGBUS handler -> monitor ring: bursts are counted and never stall it. */
#include <signal.h>

#include "ao_ring.h"
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

void test_ao_ring(void)
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
}
