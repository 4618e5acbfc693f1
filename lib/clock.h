/* SPDX-License-Identifier: GPL-2.0 */
#ifndef HWLAB_CLOCK_H
#define HWLAB_CLOCK_H

#include <stdint.h>

/*
 * CLOCK_MONOTONIC in nanoseconds: the one clock every latency in the
 * reports is measured on, in the VMM and the tools alike.
 * Async-signal-safe (clock_gettime is).
 */
uint64_t monotonic_ns(void);

#endif
