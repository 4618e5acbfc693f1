// SPDX-License-Identifier: GPL-2.0
/*
 * The output queue (vmm/core/outq.c) behind the report channel and the console:
 * a reader that stops reading never blocks a put, what does not fit is
 * dropped whole and counted, the writer says so once it has caught up, and
 * a reader that went away (EPIPE) is noticed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/outq.h"
#include "unit.h"

static volatile int notices;

static void count_notice(struct outq *q)
{
	(void)q;
	__atomic_add_fetch(&notices, 1, __ATOMIC_SEQ_CST);
}

/* Up to 2 s for cond, polled every millisecond: a hang bound, not a delay. */
#define WAIT_FOR(cond)							\
	do {								\
		const struct timespec ms = { .tv_nsec = 1000000 };	\
		int waited_;						\
		for (waited_ = 0; !(cond) && waited_ < 2000; waited_++)	\
			nanosleep(&ms, NULL);				\
	} while (0)

UNIT_TEST(outq, "output queue: drops, notices, EPIPE")
{
	/* static: the writer thread outlives this function */
	static struct outq q = OUTQ_INIT(-1), gone = OUTQ_INIT(-1);
	char line[101], buf[4096];
	unsigned long dropped, bytes;
	unsigned int i, lines = 0;
	int p[2], put_ok = 0;
	ssize_t n;

	signal(SIGPIPE, SIG_IGN);	/* as the VMM: a closed reader is EPIPE */
	CHECK_EQ(pipe(p), 0);
	/* a pipe of one page, which nobody reads yet */
	CHECK(fcntl(p[1], F_SETPIPE_SZ, 4096) >= 4096, "F_SETPIPE_SZ: %s", strerror(errno));
	q.fd = p[1];
	q.notice = count_notice;
	CHECK_EQ(outq_start(&q, 4096), 0);
	memset(line, 'x', sizeof(line) - 1);
	line[sizeof(line) - 1] = '\n';
	/* 10000 bytes into a 4 KiB pipe and a 4 KiB queue: returns, drops some */
	for (i = 0; i < 100; i++)
		put_ok += !outq_put(&q, line, sizeof(line));
	dropped = outq_dropped(&q, &bytes);
	CHECK(dropped > 0, "nothing dropped of 100 lines");
	CHECK_EQ(put_ok + dropped, 100);
	CHECK_EQ(bytes, dropped * sizeof(line));
	CHECK_EQ(notices, 0);	/* not while it is still behind */
	/* the reader comes back: every line that was taken arrives whole */
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	while (lines < (unsigned int)put_ok) {
		n = read(p[0], buf, sizeof(buf));
		if (n <= 0) {
			WAIT_FOR(outq_unwritten(&q) == 0);
			n = read(p[0], buf, sizeof(buf));
			if (n <= 0)
				break;
		}
		for (i = 0; i < n; i++)
			lines += buf[i] == '\n';
	}
	CHECK_EQ(lines, put_ok);
	WAIT_FOR(notices == 1);
	CHECK_EQ(notices, 1);	/* caught up after drops: said once */
	CHECK_EQ(outq_broken(&q), 0);

	/* the reader went away: EPIPE, noticed, and later lines are dropped */
	CHECK_EQ(pipe(p), 0);
	close(p[0]);
	gone.fd = p[1];
	gone.notice = count_notice;
	CHECK_EQ(outq_start(&gone, 4096), 0);
	outq_put(&gone, line, sizeof(line));
	WAIT_FOR(outq_broken(&gone));
	CHECK_EQ(outq_broken(&gone), EPIPE);
	WAIT_FOR(notices == 2);
	CHECK_EQ(notices, 2);
	CHECK(outq_put(&gone, line, sizeof(line)) < 0, "a put after EPIPE was taken");
	CHECK_EQ(outq_dropped(&gone, NULL), 2);
	signal(SIGPIPE, SIG_DFL);
}
