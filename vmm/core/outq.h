/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A bounded queue of output lines and the one thread that writes it to a
 * file descriptor: the report channel (stdout) and the Linux guest's console.
 * The thread that makes a line (a vCPU, the monitor) only copies it in; a
 * reader that stops reading (a full pipe, a FIFO nobody drains) blocks the
 * writer thread alone. A line that does not fit is dropped whole and
 * counted, never split and never waited for.
 *
 * Before outq_start() (and in the unit tests) a put is written at once, by
 * the caller: there is no thread yet to block.
 */
#ifndef HWLAB_OUTQ_H
#define HWLAB_OUTQ_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct outq {
	pthread_mutex_t lock;
	pthread_cond_t more;		/* the writer thread's wakeup */
	int fd;
	char *buf;			/* ring of cap bytes: [head, head + len) unwritten */
	size_t cap, head, len;
	int started;
	int broken;			/* errno of the write that failed (EPIPE...); 0 */
	unsigned long dropped_lines, dropped_bytes;
	unsigned long told_lines;	/* dropped lines that notice() was called for */
	/*
	 * Called by the writer thread, unlocked, once it has caught up after
	 * drops, and once when a write fails: the owner says so (a report line).
	 */
	void (*notice)(struct outq *q);
};

#define OUTQ_INIT(out_fd) { .lock = PTHREAD_MUTEX_INITIALIZER, \
			    .more = PTHREAD_COND_INITIALIZER, .fd = (out_fd) }

/* Give q a cap-byte ring and start its writer thread: 0, or -1 after a message. */
int outq_start(struct outq *q, size_t cap);
/* Queue (or, not started, write) one line of n bytes; 0, or -1 when dropped. */
int outq_put(struct outq *q, const char *p, size_t n);
/* Wait until everything queued is written or deadline_ns (CLOCK_MONOTONIC). */
void outq_drain(struct outq *q, uint64_t deadline_ns);
/* Bytes queued and not yet written; a plain load, async-signal-safe. */
size_t outq_unwritten(const struct outq *q);
/* Lines dropped so far (and, unless bytes is NULL, their bytes). */
unsigned long outq_dropped(struct outq *q, unsigned long *bytes);
/* errno of the failed write that ended the writer, or 0. */
int outq_broken(struct outq *q);

#endif
