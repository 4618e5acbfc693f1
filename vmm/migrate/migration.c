// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include "migrate/migration.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "clock.h"
#include "core/dirty_log.h"
#include "core/report.h"
#include "core/vm.h"
#include "hwlab_abi.h"
#include "log.h"
#include "migrate/ram.h"
#include "migrate/stream.h"

#define PAUSE_TIMEOUT_NS	(5ULL * 1000 * 1000 * 1000)
/* The destination's answer: restoring 128 MiB under nested TCG took 1.4 s; ample. */
#define ACK_TIMEOUT_MS		(120 * 1000)
/* A full listener's backlog is tried again this often. */
#define CONNECT_RETRY_MS	50

/* "unix:PATH" into addr; 0, or -1 after a message. */
static int parse_address(const char *to, struct sockaddr_un *addr)
{
	const char *path = to + 5;

	memset(addr, 0, sizeof(*addr));
	addr->sun_family = AF_UNIX;
	if (strncmp(to, "unix:", 5) || !*path || strlen(path) >= sizeof(addr->sun_path)) {
		pr_err("a migration address is unix:PATH (PATH shorter than %zu bytes), not '%s'",
		       sizeof(addr->sun_path), to);
		return -1;
	}
	memcpy(addr->sun_path, path, strlen(path));
	return 0;
}

struct send_state {
	struct vm *vm;
	void (*between_rounds)(struct vm *vm);
	int (*stopped)(void);
	struct stream s;
	struct dirty_log dirty;
	struct ram_counts ram;
	unsigned int rounds;
	long last_dirty;
	unsigned int boot_count;
	/* pages the kernel refused to read, for the report (sorted) */
	struct poison_list unreadable;
	uint64_t t_round;
};

/* Keep the writer's unreadable pages for the report. */
static int keep_unreadable(struct send_state *st, const struct ram_writer *w)
{
	unsigned int i;

	for (i = 0; i < w->unreadable.count; i++)
		if (poison_list_add(&st->unreadable, w->unreadable.gpas[i], GUEST_PAGE_SIZE) < 0)
			return -1;
	return 0;
}

/* One line a round: how long it took and what it sent. */
static void report_round(struct send_state *st, const char *kind, long dirty,
			 const struct ram_counts *before)
{
	uint64_t now = monotonic_ns();

	report("migrate_round", "\"round\":%u,\"kind\":\"%s\",\"dirty\":%ld,\"pages_data\":%llu,"
	       "\"pages_zero\":%llu,\"pages_unreadable\":%llu,\"bytes\":%llu,\"ms\":%.1f",
	       st->rounds, kind, dirty,
	       (unsigned long long)(st->ram.pages[RAM_PAGE_DATA] - before->pages[RAM_PAGE_DATA]),
	       (unsigned long long)(st->ram.pages[RAM_PAGE_ZERO] - before->pages[RAM_PAGE_ZERO]),
	       (unsigned long long)(st->ram.pages[RAM_PAGE_UNREADABLE] -
				    before->pages[RAM_PAGE_UNREADABLE]),
	       (unsigned long long)st->s.wire_bytes, (now - st->t_round) / 1e6);
	st->t_round = now;
}

/* What one pass sends through its writer: all of RAM, the dirty pages, or the poisoned ones. */
typedef int (*fill_fn)(struct send_state *st, struct ram_writer *w);

static int fill_all(struct send_state *st, struct ram_writer *w)
{
	return ram_send_all(w, st->vm);
}

static int fill_dirty(struct send_state *st, struct ram_writer *w)
{
	unsigned int i;

	for (i = 0; i < st->dirty.nr_slots; i++) {
		const struct memslot *slot = &st->vm->mem.slots[i];
		uint64_t word;

		for (word = 0; word < st->dirty.words[i]; word++) {
			uint64_t bits = st->dirty.bitmap[i][word];

			while (bits) {
				unsigned int bit = __builtin_ctzll(bits);

				bits &= bits - 1;
				if (ram_send_range(w, st->vm,
						   slot->gpa + (word * 64 + bit) * GUEST_PAGE_SIZE,
						   GUEST_PAGE_SIZE))
					return -1;
			}
		}
	}
	return ram_writer_flush(w);
}

/* Every page on the poison list as "poisoned", whatever was sent for it before. */
static int fill_poisoned(struct send_state *st, struct ram_writer *w)
{
	unsigned int i;

	for (i = 0; i < w->known->count; i++)
		if (ram_send_range(w, st->vm, w->known->gpas[i], GUEST_PAGE_SIZE))
			return -1;
	return ram_writer_flush(w);
}

/* After each RAM section: the monitor's work, and whether to stop. */
static int tick(void *arg)
{
	struct send_state *st = arg;

	st->between_rounds(st->vm);
	return st->stopped();
}

/*
 * One pass of RAM records through a writer that knows the poison list as
 * it is now (an AO may have added to it since the last pass); its counts
 * added up and the pages the kernel refused kept for the report.
 */
static int send_pass(struct send_state *st, fill_fn fill)
{
	struct poison_list known;
	struct ram_writer w;
	unsigned int k;
	int r = -1;

	if (guest_poison_copy(&st->vm->poisoned, &known))
		return -1;
	if (!ram_writer_init(&w, &st->s, &known)) {
		w.tick = tick;
		w.tick_arg = st;
		r = fill(st, &w) || keep_unreadable(st, &w) ? -1 : 0;
		for (k = 0; k < RAM_PAGE_KINDS; k++)
			st->ram.pages[k] += w.c.pages[k];
		ram_writer_free(&w);
	}
	poison_list_free(&known);
	return r;
}

/* The destination's answer byte, or 0 for none within the timeout (EOF, an error, a stop). */
static char wait_ack(struct stream *s)
{
	char c = 0;

	return stream_get_byte(s, &c, ACK_TIMEOUT_MS) ? 0 : c;
}

/*
 * Connect without blocking: a listener whose backlog is full (one that
 * never accepts) makes a non-blocking Unix connect() fail with EAGAIN
 * instead of waiting for ever; it is tried again every CONNECT_RETRY_MS
 * until STREAM_IO_TIMEOUT_S or a stop. The fd, or -1 after a message.
 */
static int connect_bounded(const char *to, const struct sockaddr_un *addr, int (*stopped)(void))
{
	uint64_t deadline = monotonic_ns() + STREAM_IO_TIMEOUT_S * 1000000000ull;
	struct timespec slice = { .tv_nsec = CONNECT_RETRY_MS * 1000000L };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0) {
		pr_errno("--migrate-to: a socket for %s", to);
		return -1;
	}
	for (;;) {
		if (!connect(fd, (const struct sockaddr *)addr, sizeof(*addr)))
			return fd;
		if (errno != EAGAIN && errno != EINTR) {
			pr_errno("--migrate-to: connecting to %s", to);
			break;
		}
		if (stopped()) {
			pr_err("--migrate-to: connecting to %s: stopped", to);
			break;
		}
		if (monotonic_ns() >= deadline) {
			pr_err("--migrate-to: connecting to %s: its listener took no connection for "
			       "%d s (its backlog is full)", to, STREAM_IO_TIMEOUT_S);
			break;
		}
		nanosleep(&slice, NULL);
	}
	close(fd);
	return -1;
}

#define REPORT_UNREADABLE	8

static void report_migrate(const struct send_state *st, const char *status, const char *why,
			   uint64_t total_ns, uint64_t down_ns, const struct snapshot_stats *ms)
{
	char gpas[REPORT_UNREADABLE * 24] = "", *g = gpas;
	unsigned int i;

	/* the first of them: which pages the copy found poisoned */
	for (i = 0; i < st->unreadable.count && i < REPORT_UNREADABLE; i++)
		g += sprintf(g, "%s\"%#llx\"", i ? "," : "",
			     (unsigned long long)st->unreadable.gpas[i]);
	report("migrate", "\"status\":\"%s\",\"reason\":\"%s\",\"unreadable_gpas\":[%s],"
	       "\"rounds\":%u,\"bytes\":%llu,"
	       "\"pages_data\":%llu,\"pages_zero\":%llu,\"pages_poisoned\":%llu,"
	       "\"pages_unreadable\":%llu,\"last_round_dirty\":%ld,\"poisoned_heard\":%u,"
	       "\"poisoned_told\":%u,\"total_ms\":%.1f,\"downtime_ms\":%.1f",
	       status, why, gpas, st->rounds, (unsigned long long)st->s.wire_bytes,
	       (unsigned long long)st->ram.pages[RAM_PAGE_DATA],
	       (unsigned long long)st->ram.pages[RAM_PAGE_ZERO],
	       (unsigned long long)st->ram.pages[RAM_PAGE_POISONED],
	       (unsigned long long)st->ram.pages[RAM_PAGE_UNREADABLE], st->last_dirty,
	       ms->poisoned_heard, ms->poisoned_told, total_ns / 1e6, down_ns / 1e6);
}

int migration_send(struct vm *vm, const char *to, void (*between_rounds)(struct vm *vm),
		   int (*stopped)(void))
{
	static struct send_state st;
	struct snapshot_stats ms = { 0 };
	struct sockaddr_un addr;
	uint64_t t0 = monotonic_ns(), t_pause = 0;
	const char *why = "";
	int fd = -1, paused = 0, logging = 0, ret = 0;
	struct ram_counts before;
	char ack, qto[512];

	poison_list_free(&st.unreadable);
	memset(&st, 0, sizeof(st));
	st.vm = vm;
	st.between_rounds = between_rounds;
	st.stopped = stopped;
	st.boot_count = vm->boot_count;
	if (parse_address(to, &addr))
		return 0;
	json_escape(qto, sizeof(qto), to);
	report("migrate_connect", "\"to\":\"%s\"", qto);
	fd = connect_bounded(to, &addr, stopped);
	if (fd < 0) {
		why = "cannot connect to the destination";
		goto fail;
	}
	if (stream_out_socket(&st.s, fd, "the migration socket", stopped) ||
	    snapshot_put_config(vm, &st.s)) {
		why = "the destination went away";
		goto fail;
	}
	/* (a start that fails part-way is undone by the stop) */
	logging = 1;
	if (dirty_log_start(vm, &st.dirty)) {
		why = "KVM's dirty log";
		goto fail;
	}
	if (vm->opt->migrate_mib_s)
		stream_set_rate(&st.s, (uint64_t)vm->opt->migrate_mib_s << 20);
	/* round 0: all of RAM, the guest running; the log from here on */
	st.t_round = monotonic_ns();
	before = st.ram;
	if (dirty_log_fetch(vm, &st.dirty) < 0 || send_pass(&st, fill_all)) {
		why = "sending RAM";
		goto fail;
	}
	report_round(&st, "all", -1, &before);
	for (st.rounds = 1;; st.rounds++) {
		between_rounds(vm);
		if (stopped()) {
			why = "the VMM was asked to stop";
			goto fail;
		}
		st.last_dirty = dirty_log_fetch(vm, &st.dirty);
		if (st.last_dirty < 0) {
			why = "KVM's dirty log";
			goto fail;
		}
		if (st.last_dirty <= MIGRATE_STOP_PAGES || st.rounds >= MIGRATE_MAX_ROUNDS)
			break;
		before = st.ram;
		if (send_pass(&st, fill_dirty)) {
			why = "sending RAM";
			goto fail;
		}
		report_round(&st, "dirty", st.last_dirty, &before);
	}
	/* stop and copy: what the last round left, then what the guest writes until the pause */
	t_pause = monotonic_ns();
	if (vm_pause(vm, PAUSE_TIMEOUT_NS)) {
		why = "a vCPU did not pause";
		goto fail;
	}
	paused = 1;
	/* the guest waits now: the last copy goes at full speed */
	stream_set_rate(&st.s, 0);
	/* a vCPU that asked for a reboot or failed has left its loop: nothing to move */
	if (vm->stop || vm->boot_count != st.boot_count) {
		why = "the guest rebooted or stopped during the migration (a new boot area is not "
		      "in the dirty log)";
		goto fail;
	}
	between_rounds(vm);
	before = st.ram;
	if (send_pass(&st, fill_dirty) || dirty_log_fetch(vm, &st.dirty) < 0 ||
	    send_pass(&st, fill_dirty)) {
		why = "sending RAM";
		goto fail;
	}
	report_round(&st, "paused", st.last_dirty, &before);
	if (send_pass(&st, fill_poisoned) || snapshot_put_machine(vm, &st.s, &ms) ||
	    stream_out_close(&st.s)) {
		why = "sending the machine's state";
		goto fail;
	}
	ack = wait_ack(&st.s);
	if (ack != MIGRATE_ACK_OK) {
		why = ack ? "the destination refused the state (see its report)" :
			    "no answer from the destination";
		goto fail;
	}
	/* the hand-over: from here the destination runs the guest, this VMM never again */
	if (stream_put_byte(&st.s, MIGRATE_GO)) {
		pr_err("--migrate-to: handing over to the destination failed");
		why = "the hand-over failed: the destination does not run the guest";
		goto fail;
	}
	report_migrate(&st, "ok", "the destination runs the guest", monotonic_ns() - t0,
		       monotonic_ns() - t_pause, &ms);
	ret = 1;
	goto out;
fail:
	report_migrate(&st, "fail", why, monotonic_ns() - t0, 0, &ms);
out:
	/* before the guest runs here again: a late 'K' must find no 'G', and no socket */
	if (fd >= 0 && ret != 1)
		shutdown(fd, SHUT_RDWR);
	if (logging && ret != 1)
		dirty_log_stop(vm, &st.dirty);
	if (paused && ret != 1)
		vm_resume(vm);
	if (fd >= 0)
		close(fd);
	/* migrated: the guest stays paused until the caller stops it */
	return ret;
}
