/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A token bucket: a burst of lines at once, then a steady rate, and a count
 * of what it held back. Pure (the caller passes the time), not locked: one
 * per vCPU thread.
 */
#ifndef HWLAB_RATELIMIT_H
#define HWLAB_RATELIMIT_H

#include <stdint.h>

struct ratelimit {
	uint64_t interval_ns;	/* one token per interval */
	uint64_t capacity_ns;	/* burst tokens' worth of intervals */
	uint64_t credit_ns;	/* what the bucket holds, in time */
	uint64_t last_ns;	/* when credit_ns was last brought up to date */
	uint64_t suppressed;	/* refused since the last ratelimit_take_suppressed() */
};

/* Full: burst events may pass at once, then per_sec a second (per_sec > 0). */
void ratelimit_init(struct ratelimit *rl, unsigned int burst, unsigned int per_sec,
		    uint64_t now_ns);
/* 1: let this one through; 0: hold it back (counted). */
int ratelimit_allow(struct ratelimit *rl, uint64_t now_ns);
/* How many were held back since the last call; resets the count. */
uint64_t ratelimit_take_suppressed(struct ratelimit *rl);

#endif
