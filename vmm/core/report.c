// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include "core/report.h"

#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "core/outq.h"

/*
 * Room for a few thousand lines: a reader that keeps up never sees a drop,
 * one that stopped costs the VMM this much memory and no more.
 */
#define REPORT_QUEUE_BYTES	(1U << 20)

static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;
static struct outq report_q = OUTQ_INIT(STDOUT_FILENO);

/*
 * The writer caught up after dropping lines: say how many, in the channel
 * that lost them. A broken channel cannot be told anything.
 */
static void report_notice(struct outq *q)
{
	unsigned long lines, bytes;

	lines = outq_dropped(q, &bytes);
	if (!outq_broken(q))
		report("report_dropped", "\"lines\":%lu,\"bytes\":%lu,\"reason\":\"stdout was "
		       "not read fast enough\"", lines, bytes);
}

int report_start(void)
{
	report_q.notice = report_notice;
	return outq_start(&report_q, REPORT_QUEUE_BYTES);
}

void report(const char *event, const char *fmt, ...)
{
	char small[1024], *line = small;
	int n, m;
	va_list ap;

	pthread_mutex_lock(&report_lock);
	/* the members first: most lines fit the stack buffer, the rest get the heap */
	va_start(ap, fmt);
	n = fmt && *fmt ? vsnprintf(NULL, 0, fmt, ap) : 0;
	va_end(ap);
	if (n < 0)
		n = 0;
	if (n + strlen(event) + 64 > sizeof(small)) {
		line = malloc(n + strlen(event) + 64);
		if (!line) {
			pthread_mutex_unlock(&report_lock);
			return;
		}
	}
	m = sprintf(line, "{\"event\":\"%s\"%s", event, n ? "," : "");
	if (n) {
		va_start(ap, fmt);
		m += vsprintf(line + m, fmt, ap);
		va_end(ap);
	}
	/*
	 * CLOCK_MONOTONIC is one clock for every process: tools line events up
	 * by it. Taken under the lock, so the lines are in t_ns order.
	 */
	m += sprintf(line + m, ",\"t_ns\":%llu}\n", (unsigned long long)monotonic_ns());
	outq_put(&report_q, line, m);
	pthread_mutex_unlock(&report_lock);
	if (line != small)
		free(line);
}

int report_channel_broken(void)
{
	return outq_broken(&report_q);
}

unsigned long report_dropped_lines(void)
{
	return outq_dropped(&report_q, NULL);
}

void report_drain(uint64_t deadline_ns)
{
	outq_drain(&report_q, deadline_ns);
}

void report_write_last(const char *line, size_t len, unsigned int timeout_ms)
{
	const struct timespec ms = { .tv_nsec = 1000 * 1000 };
	struct pollfd pfd = { .fd = STDOUT_FILENO, .events = POLLOUT };
	unsigned int waited = 0;
	ssize_t r;

	/* the lines before it first: a line that jumped them would lie about order */
	for (; outq_unwritten(&report_q) && waited < timeout_ms; waited++)
		nanosleep(&ms, NULL);
	/*
	 * POLLOUT on a pipe means a free slot: a write of one line (less than
	 * PIPE_BUF) then does not block. A full pipe nobody reads loses it.
	 */
	if (poll(&pfd, 1, timeout_ms - waited) == 1 && (pfd.revents & POLLOUT)) {
		r = write(STDOUT_FILENO, line, len);
		(void)r;
	}
}

void json_escape(char *dst, unsigned long dstlen, const char *s)
{
	unsigned long n = 0;

	for (; *s && n + 7 < dstlen; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\') {
			dst[n++] = '\\';
			dst[n++] = c;
		} else if (c < 0x20 || c >= 0x7f) {
			n += snprintf(dst + n, dstlen - n, "\\u%04x", c);
		} else {
			dst[n++] = c;
		}
	}
	dst[n] = 0;
}
