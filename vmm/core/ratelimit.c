// SPDX-License-Identifier: GPL-2.0
#include "core/ratelimit.h"

#define NSEC_PER_SEC 1000000000ULL

void ratelimit_init(struct ratelimit *rl, unsigned int burst, unsigned int per_sec,
		    uint64_t now_ns)
{
	rl->interval_ns = NSEC_PER_SEC / per_sec;
	rl->capacity_ns = rl->interval_ns * burst;
	rl->credit_ns = rl->capacity_ns;
	rl->last_ns = now_ns;
	rl->suppressed = 0;
}

int ratelimit_allow(struct ratelimit *rl, uint64_t now_ns)
{
	/* a clock that went back refills nothing */
	uint64_t elapsed = now_ns > rl->last_ns ? now_ns - rl->last_ns : 0;

	rl->last_ns = now_ns > rl->last_ns ? now_ns : rl->last_ns;
	if (elapsed >= rl->capacity_ns - rl->credit_ns)
		rl->credit_ns = rl->capacity_ns;
	else
		rl->credit_ns += elapsed;
	if (rl->credit_ns < rl->interval_ns) {
		rl->suppressed++;
		return 0;
	}
	rl->credit_ns -= rl->interval_ns;
	return 1;
}

uint64_t ratelimit_take_suppressed(struct ratelimit *rl)
{
	uint64_t n = rl->suppressed;

	rl->suppressed = 0;
	return n;
}
