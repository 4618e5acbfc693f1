/* SPDX-License-Identifier: GPL-2.0 */
/* One JSON object per line on stdout for every event, for tests and people. */
#ifndef HWLAB_REPORT_H
#define HWLAB_REPORT_H

#include <stdint.h>

/*
 * Print {"event":"<event>", ...} where fmt/... give the remaining members
 * already in JSON syntax, e.g. report("guest_log", "\"vcpu\":%u", id).
 * Lines from different threads never interleave.
 */
void report(const char *event, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Copy s into a JSON string body (quotes and control characters escaped). */
void json_escape(char *dst, unsigned long dstlen, const char *s);

#endif
