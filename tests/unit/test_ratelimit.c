// SPDX-License-Identifier: GPL-2.0
/* The token bucket behind the guest_log rate limit. */
#include "core/ratelimit.h"
#include "unit.h"

#define MS 1000000ULL

/* How many of n events, each `step` ns after the last, get through. */
static unsigned int allowed(struct ratelimit *rl, uint64_t *now, unsigned int n, uint64_t step)
{
	unsigned int i, ok = 0;

	for (i = 0; i < n; i++, *now += step)
		ok += ratelimit_allow(rl, *now);
	return ok;
}

UNIT_TEST(ratelimit, "guest log rate limit")
{
	uint64_t now = 5000 * MS;
	struct ratelimit rl;
	unsigned int n;

	/* burst 50, then 20/s: a tight loop gets the burst and nothing more */
	ratelimit_init(&rl, 50, 20, now);
	CHECK_EQ(allowed(&rl, &now, 1000, 0), 50);
	CHECK_EQ(ratelimit_take_suppressed(&rl), 950);
	CHECK_EQ(ratelimit_take_suppressed(&rl), 0);	/* taking resets */

	/* one token per 50 ms after that */
	now += 49 * MS;
	CHECK_EQ(ratelimit_allow(&rl, now), 0);
	now += 1 * MS;
	CHECK_EQ(ratelimit_allow(&rl, now), 1);
	CHECK_EQ(ratelimit_allow(&rl, now), 0);
	CHECK_EQ(ratelimit_take_suppressed(&rl), 2);

	/* a steady 1 kHz flood for 10 s: 20/s of it, give or take one */
	n = allowed(&rl, &now, 10000, 1 * MS);	/* once: CHECK_EQ evaluates twice */
	CHECK(n >= 199 && n <= 200, "%u of a 10 s flood at 1 kHz", n);

	/* a long quiet spell refills the burst, and no more than the burst */
	now += 3600 * 1000 * MS;
	CHECK_EQ(allowed(&rl, &now, 100, 0), 50);

	/* a clock that goes backwards refills nothing and does not wrap */
	now -= 10 * 1000 * MS;
	CHECK_EQ(allowed(&rl, &now, 10, 0), 0);

	/* below the rate, nothing is held back */
	ratelimit_init(&rl, 50, 20, now);
	ratelimit_take_suppressed(&rl);
	CHECK_EQ(allowed(&rl, &now, 1000, 100 * MS), 1000);
	CHECK_EQ(ratelimit_take_suppressed(&rl), 0);
}
