/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One JSON object per line on stdout for every event, for tests and people:
 * the report channel. Lines are queued (vmm/core/outq.h) and written by their
 * own thread once report_start() ran, so that a reader who stops reading
 * never blocks a vCPU or the monitor; what does not fit is counted.
 */
#ifndef HWLAB_REPORT_H
#define HWLAB_REPORT_H

#include <stddef.h>
#include <stdint.h>

/*
 * Print {"event":"<event>", ...} where fmt/... give the remaining members
 * already in JSON syntax, e.g. report("guest_log", "\"vcpu\":%u", id).
 * Lines from different threads never interleave. Never blocks on stdout.
 */
void report(const char *event, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Copy s into a JSON string body (quotes and control characters escaped). */
void json_escape(char *dst, unsigned long dstlen, const char *s);

/* Start the report channel's writer thread: 0, or -1 after a message. */
int report_start(void);
/*
 * Nobody hears the reports any more: a write to stdout failed (EPIPE: its
 * reader closed it; EFBIG: past the file size limit). The VMM then stops
 * the guest (exit status 4).
 */
int report_channel_broken(void);
/* Report lines dropped because stdout was not read fast enough, or broke. */
unsigned long report_dropped_lines(void);
/* Wait until every queued report line is written, or deadline_ns. */
void report_drain(uint64_t deadline_ns);
/*
 * For a signal handler about to _exit(): wait up to timeout_ms for the
 * queued lines to go out, then write line (one write(2), if stdout takes
 * it within what is left of timeout_ms). Async-signal-safe: no lock, no
 * stdio, only poll(2), nanosleep(2), write(2) and atomic loads.
 */
void report_write_last(const char *line, size_t len, unsigned int timeout_ms);

#endif
