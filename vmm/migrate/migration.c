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

/* The destination's answer byte, or 0 for none within the timeout (EOF, an error). */
static char wait_ack(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c = 0;

	if (poll(&p, 1, ACK_TIMEOUT_MS) == 1 && read(fd, &c, 1) == 1)
		return c;
	return 0;
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
	char ack;

	poison_list_free(&st.unreadable);
	memset(&st, 0, sizeof(st));
	st.vm = vm;
	st.between_rounds = between_rounds;
	st.stopped = stopped;
	st.boot_count = vm->boot_count;
	if (parse_address(to, &addr))
		return 0;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		pr_errno("--migrate-to: connecting to %s", to);
		why = "cannot connect to the destination";
		goto fail;
	}
	if (stream_out_open(&st.s, fd, "the migration socket") ||
	    stream_on_socket(&st.s, stopped) || snapshot_put_config(vm, &st.s)) {
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
	ack = wait_ack(fd);
	if (ack != MIGRATE_ACK_OK) {
		why = ack ? "the destination refused the state (see its report)" :
			    "no answer from the destination";
		goto fail;
	}
	/* the hand-over: from here the destination runs the guest, this VMM never again */
	if (write(fd, &(char){ MIGRATE_GO }, 1) != 1) {
		pr_errno("--migrate-to: handing over to the destination");
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

int migration_listen(const char *to)
{
	struct sockaddr_un addr;
	int fd;

	if (parse_address(to, &addr))
		return -1;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	/* bind() makes a new socket file, and fails on anything already there (a planted link) */
	if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof(addr)) || listen(fd, 1)) {
		pr_errno("--incoming: listening on %s", to);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

void migration_unlink(const char *to)
{
	if (!strncmp(to, "unix:", 5))
		unlink(to + 5);
}

int migration_receive(struct vm *vm, int conn, const char *to, struct restore_result *r,
		      int (*stopped)(void))
{
	uint64_t t0 = monotonic_ns();
	char qto[512], ack, go = 0;
	struct stream s;
	int ret;

	json_escape(qto, sizeof(qto), to);
	ret = stream_in_open(&s, conn, "the migration socket") || stream_on_socket(&s, stopped) ||
	      snapshot_restore_state(vm, &s, r) ? -1 : 0;
	ack = ret ? MIGRATE_ACK_REFUSED : MIGRATE_ACK_OK;
	if (write(conn, &ack, 1) != 1 && !ret) {
		pr_errno("--incoming: answering the source");
		ret = -1;
	}
	/* the guest runs here only once the source has stopped it for good */
	if (!ret && (read(conn, &go, 1) != 1 || go != MIGRATE_GO)) {
		pr_err("--incoming: the source did not hand the guest over (it runs it on)");
		ret = -1;
	}
	if (ret) {
		snapshot_report_refused("incoming", qto);
		return -1;
	}
	snapshot_report_restore("incoming", qto, r, monotonic_ns() - t0);
	return 0;
}
