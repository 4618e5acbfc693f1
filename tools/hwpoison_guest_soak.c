// SPDX-License-Identifier: GPL-2.0
/*
 * hwpoison-guest --soak: N consecutive pages poisoned one at a time, each
 * after the guest acknowledged the last (the VMM's guest_retired line),
 * then one line of how long each took from the write, and where.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "hwpoison_guest.h"
#include "log.h"
#include "memmap.h"

/*
 * The soak follows the VMM's report as it grows, reading each line once
 * (re-reading the whole file for every poll made the tool itself the slow
 * part of an event as the log grew), and lines each event up on the one
 * CLOCK_MONOTONIC: the tool's write, the VMM's SIGBUS handler, its
 * injection report, and the guest's acknowledgement.
 */
struct soak_event {
	uint64_t t_write;	/* tool: just before the corrupt-pfn write */
	uint64_t t_signal;	/* VMM: SIGBUS handler (signal_t_ns) */
	uint64_t t_queued;	/* VMM, AO: the monitor queued it for a vCPU (queued_t_ns) */
	uint64_t t_inject;	/* VMM: injection reported (t_ns of the inject line) */
	uint64_t t_retired;	/* VMM: the guest's RETIRED ucall reported */
	uint64_t t_seen;	/* tool: saw the guest_retired line */
	unsigned int injected, retired;
	int ar;			/* the injection was an AR: the guest touched it first */
};

struct soak {
	FILE *log;
	uint64_t first;
	unsigned int events;
	struct soak_event *ev;
};

/* Report lines read by hwpoison_guest_soak_line(): as JSON, never searched as text. */
static void soak_account(struct soak *sk, const char *line, uint64_t now)
{
	struct soak_line l;
	struct soak_event *e;

	if (hwpoison_guest_soak_line(line, &l) == SOAK_LINE_OTHER || l.gpa < sk->first ||
	    (l.gpa - sk->first) / PAGE >= sk->events)
		return;
	e = &sk->ev[(l.gpa - sk->first) / PAGE];
	if (l.kind == SOAK_LINE_INJECT && !e->injected++) {
		e->t_signal = l.signal_t_ns;
		e->t_queued = l.queued_t_ns;
		e->t_inject = l.t_ns;
		e->ar = l.ar;
	}
	if (l.kind == SOAK_LINE_RETIRED && !e->retired++) {
		e->t_retired = l.t_ns;
		e->t_seen = now;
	}
}

/* Account every complete line the VMM has added since the last call. */
static void soak_follow(struct soak *sk)
{
	char line[1024];

	for (;;) {
		long at = ftell(sk->log);

		if (!fgets(line, sizeof(line), sk->log)) {
			clearerr(sk->log);
			return;
		}
		if (!strchr(line, '\n')) {
			/* a line still being written: read it whole next time */
			fseek(sk->log, at, SEEK_SET);
			clearerr(sk->log);
			return;
		}
		soak_account(sk, line, monotonic_ns());
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sort v (n values); the smallest value with at least num/den of them at or below it. */
static uint64_t quantile(uint64_t *v, unsigned int n, unsigned int num, unsigned int den)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u64);
	return v[((uint64_t)n * num + den - 1) / den - 1];
}

static uint64_t span(uint64_t from, uint64_t to)
{
	return from && to > from ? to - from : 0;
}

static void soak_print(const struct soak *sk, unsigned int lost, unsigned int dup)
{
	uint64_t *total = calloc(sk->events, sizeof(*total)), *part = calloc(sk->events,
									  sizeof(*part));
	uint64_t med[4], p50, p99;
	unsigned int i, n = 0, slow = 0, ar = 0, k;
	const struct soak_event *s;

	if (!total || !part)
		die("out of memory");
	for (i = 0; i < sk->events; i++) {
		const struct soak_event *e = &sk->ev[i];

		if (!e->retired)
			continue;
		total[n++] = e->t_seen - e->t_write;
		ar += e->ar;
		if (e->t_seen - e->t_write > sk->ev[slow].t_seen - sk->ev[slow].t_write ||
		    !sk->ev[slow].retired)
			slow = i;
	}
	/*
	 * the median of each stage: write->signal (kernel), signal->inject (VMM;
	 * for an AO also split at the monitor queueing it: vmm_monitor_ns is
	 * the monitor's wakeup, vmm_vcpu_ns the vCPU's next exit), inject->ack
	 * (guest), ack->seen (tool)
	 */
	for (k = 0; k < 4; k++) {
		unsigned int m = 0;

		for (i = 0; i < sk->events; i++) {
			const struct soak_event *e = &sk->ev[i];
			uint64_t t[5] = { e->t_write, e->t_signal, e->t_inject, e->t_retired, e->t_seen };

			if (e->retired)
				part[m++] = span(t[k], t[k + 1]);
		}
		med[k] = quantile(part, m, 1, 2);
	}
	s = &sk->ev[slow];
	/* sorted here, before total[n - 1] is read as the maximum */
	p50 = quantile(total, n, 1, 2);
	p99 = quantile(total, n, 99, 100);
	printf("{\"event\":\"soak\",\"events\":%u,\"acked\":%u,\"lost\":%u,\"duplicated\":%u,"
	       "\"ar\":%u,\"median_ns\":%" PRIu64 ",\"p99_ns\":%" PRIu64 ",\"max_ns\":%" PRIu64 ","
	       "\"median_kernel_ns\":%" PRIu64 ",\"median_vmm_ns\":%" PRIu64 ","
	       "\"median_guest_ns\":%" PRIu64 ",\"median_tool_ns\":%" PRIu64 ","
	       "\"slowest\":{\"gpa\":\"%#" PRIx64 "\",\"si_code\":\"%s\",\"total_ns\":%" PRIu64 ","
	       "\"kernel_ns\":%" PRIu64 ",\"vmm_ns\":%" PRIu64 ",\"guest_ns\":%" PRIu64 ","
	       "\"tool_ns\":%" PRIu64 ",\"vmm_monitor_ns\":%" PRIu64 ",\"vmm_vcpu_ns\":%" PRIu64
	       "}}\n",
	       sk->events, n, lost, dup, ar, p50, p99, n ? total[n - 1] : 0, med[0], med[1], med[2], med[3],
	       (uint64_t)(sk->first + slow * PAGE), s->ar ? "BUS_MCEERR_AR" : "BUS_MCEERR_AO",
	       span(s->t_write, s->t_seen), span(s->t_write, s->t_signal),
	       span(s->t_signal, s->t_inject), span(s->t_inject, s->t_retired),
	       span(s->t_retired, s->t_seen), span(s->t_signal, s->t_queued),
	       span(s->t_queued, s->t_inject));
	free(total);
	free(part);
}

int hwpoison_guest_soak(const struct hwpoison_guest *g, pid_t pid, const struct memmap *m,
			uint64_t first)
{
	unsigned int events = g->opt.soak_events;
	const char *log = g->opt.soak_log;
	struct soak sk = { .first = first & ~(PAGE - 1), .events = events };
	unsigned int i, lost = 0, dup = 0;

	sk.ev = calloc(events, sizeof(*sk.ev));
	sk.log = fopen(log, "r");
	if (!sk.ev)
		die("out of memory");
	if (!sk.log)
		die("cannot read VMM report %s: %s", log, strerror(errno));
	for (i = 0; i < events; i++) {
		struct soak_event *e = &sk.ev[i];
		uint64_t deadline;

		e->t_write = hwpoison_guest_poison(g, pid, m, sk.first + i * PAGE);
		/* a bound for a lost event, not a delay: the loop ends on the line */
		deadline = e->t_write + 10ULL * 1000000000ULL;
		for (;;) {
			soak_follow(&sk);
			if (e->retired || monotonic_ns() >= deadline)
				break;
			usleep(100);
		}
		lost += !e->retired;
	}
	soak_follow(&sk);
	for (i = 0; i < events; i++)
		dup += (sk.ev[i].retired > 1) + (sk.ev[i].injected > 1);
	soak_print(&sk, lost, dup);
	fclose(sk.log);
	free(sk.ev);
	return lost || dup;
}
