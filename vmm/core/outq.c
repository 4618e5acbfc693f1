// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include "core/outq.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"

/*
 * len is written under the lock but read without it by outq_unwritten(),
 * which a signal handler calls: atomic stores and loads, so that such a
 * read is a whole value.
 */
static void set_len(struct outq *q, size_t len)
{
	__atomic_store_n(&q->len, len, __ATOMIC_RELEASE);
}

size_t outq_unwritten(const struct outq *q)
{
	return __atomic_load_n(&q->len, __ATOMIC_ACQUIRE);
}

/*
 * One write(2) of up to n bytes: how many went out, or -1 with errno. A
 * non-blocking fd (a console FIFO opened O_NONBLOCK) that is full waits in
 * poll(2), up to timeout_ms (-1: as long as it takes: only the writer
 * thread waits that way).
 */
static ssize_t write_some(int fd, const char *p, size_t n, int timeout_ms)
{
	for (;;) {
		ssize_t w = write(fd, p, n);
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };

		if (w >= 0 || (errno != EINTR && errno != EAGAIN))
			return w;
		if (errno == EAGAIN && poll(&pfd, 1, timeout_ms) == 0) {
			errno = ETIMEDOUT;
			return -1;
		}
	}
}

/* The queue's lines that can no longer be written: dropped and counted. */
static void drop_queued(struct outq *q)
{
	size_t i;

	for (i = 0; i < q->len; i++)
		q->dropped_lines += q->buf[(q->head + i) % q->cap] == '\n';
	q->dropped_bytes += q->len;
	q->told_lines = q->dropped_lines;	/* the broken notice covers them */
	q->head = 0;
	set_len(q, 0);
}

static void *writer(void *arg)
{
	struct outq *q = arg;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		size_t chunk;
		ssize_t n;

		if (!q->len) {
			if (q->dropped_lines > q->told_lines && q->notice) {
				/* caught up after drops: there is room to say so now */
				q->told_lines = q->dropped_lines;
				pthread_mutex_unlock(&q->lock);
				q->notice(q);
				pthread_mutex_lock(&q->lock);
			} else {
				pthread_cond_wait(&q->more, &q->lock);
			}
			continue;
		}
		/*
		 * Written outside the lock: producers only fill the free part of
		 * the ring, and only this thread moves head.
		 */
		chunk = q->len < q->cap - q->head ? q->len : q->cap - q->head;
		pthread_mutex_unlock(&q->lock);
		n = write_some(q->fd, q->buf + q->head, chunk, -1);
		pthread_mutex_lock(&q->lock);
		if (n <= 0) {
			/* EPIPE (SIGPIPE is ignored), EIO, ENOSPC: nothing more gets through */
			q->broken = n < 0 ? errno : EIO;
			drop_queued(q);
			pthread_mutex_unlock(&q->lock);
			if (q->notice)
				q->notice(q);
			return NULL;
		}
		q->head = (q->head + n) % q->cap;
		set_len(q, q->len - n);
	}
}

int outq_start(struct outq *q, size_t cap)
{
	pthread_t t;
	int e;

	q->buf = malloc(cap);
	if (!q->buf) {
		pr_err("no memory for a %zu-byte output queue", cap);
		return -1;
	}
	q->cap = cap;
	e = pthread_create(&t, NULL, writer, q);
	if (e) {
		pr_err("pthread_create for an output writer: %s", strerror(e));
		return -1;
	}
	pthread_detach(t);
	pthread_mutex_lock(&q->lock);
	q->started = 1;
	pthread_mutex_unlock(&q->lock);
	return 0;
}

int outq_put(struct outq *q, const char *p, size_t n)
{
	size_t tail, first;

	pthread_mutex_lock(&q->lock);
	if (!q->started) {
		/* no writer thread yet: best effort, at once, whole lines in order */
		while (n) {
			ssize_t w = write_some(q->fd, p, n, 1000);

			if (w <= 0)
				break;
			p += w;
			n -= w;
		}
		pthread_mutex_unlock(&q->lock);
		return 0;
	}
	if (q->broken || n > q->cap - q->len) {
		q->dropped_lines++;
		q->dropped_bytes += n;
		pthread_mutex_unlock(&q->lock);
		return -1;
	}
	tail = (q->head + q->len) % q->cap;
	first = n < q->cap - tail ? n : q->cap - tail;
	memcpy(q->buf + tail, p, first);
	memcpy(q->buf, p + first, n - first);
	set_len(q, q->len + n);
	pthread_cond_signal(&q->more);
	pthread_mutex_unlock(&q->lock);
	return 0;
}

void outq_drain(struct outq *q, uint64_t deadline_ns)
{
	const struct timespec ms = { .tv_nsec = 1000 * 1000 };

	while (q->started && outq_unwritten(q) && !outq_broken(q) && monotonic_ns() < deadline_ns)
		nanosleep(&ms, NULL);
}

unsigned long outq_dropped(struct outq *q, unsigned long *bytes)
{
	unsigned long lines;

	pthread_mutex_lock(&q->lock);
	lines = q->dropped_lines;
	if (bytes)
		*bytes = q->dropped_bytes;
	pthread_mutex_unlock(&q->lock);
	return lines;
}

int outq_broken(struct outq *q)
{
	int b;

	pthread_mutex_lock(&q->lock);
	b = q->broken;
	pthread_mutex_unlock(&q->lock);
	return b;
}
