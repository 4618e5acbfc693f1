// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include "mce/sigbus.h"

#include "mce/ao_ring.h"
#include "clock.h"
#include "core/guest_ram.h"
#include "core/hugetlb_salvage.h"
#include "core/report.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#ifndef MADV_HWPOISON
#define MADV_HWPOISON 100
#endif

static __thread struct sigbus_thread *this_thread;
/*
 * The page this thread is poisoning with madvise(MADV_HWPOISON) right now
 * (sigbus_madvise_hwpoison()), and the AR the kernel answered with from inside
 * that call, if it did.
 */
static __thread volatile uintptr_t madvise_page;
static __thread volatile sig_atomic_t madvise_ar;
static __thread struct sigbus_event madvise_ev[2];	/* that page; another mapping's */
static const struct memslot_table *guest_mem;
static int ao_pipe[2] = { -1, -1 };
/* AO events, from the handlers to the monitor thread. */
static struct ao_ring events;

/*
 * SIGBUS that processes sent. Counted apart from the AO ring: 1500 kill -BUS
 * once filled it and AOs the kernel sent meanwhile were dropped. The
 * handler only does lock-free atomics here (async-signal-safe); a slot of
 * first[] is written by the one handler whose count claimed it.
 */
static struct {
	unsigned long count;
	struct sigbus_event first[SIGBUS_FOREIGN_KEPT];
	int ready[SIGBUS_FOREIGN_KEPT];
	/* the last sender: pid in the high half, uid in the low; one store */
	uint64_t last_sender;
	int last_code;
} foreign;

const char *sigbus_code_name(int code)
{
	switch (code) {
	case BUS_MCEERR_AO:
		return "BUS_MCEERR_AO";
	case BUS_MCEERR_AR:
		return "BUS_MCEERR_AR";
	case SI_USER:
		return "SI_USER";
	case SI_QUEUE:
		return "SI_QUEUE";
	case SI_TKILL:
		return "SI_TKILL";
	case SI_KERNEL:
		return "SI_KERNEL";
	}
	return "other";
}

/*
 * die_consumed()'s report line, built in one buffer and written with one
 * write(2) at the end: pieces written one by one could interleave with the
 * report writer's lines, and each could block on a full stdout.
 */
struct line_buf {
	char s[512];
	size_t n;
};

/* Append a string; async-signal-safe (no stdio). */
static void put(struct line_buf *b, const char *s)
{
	while (*s && b->n < sizeof(b->s) - 1)
		b->s[b->n++] = *s++;
}

static void put_hex(struct line_buf *b, uint64_t v)
{
	char buf[19] = "0x";
	int i, n = 0;

	for (i = 60; i >= 0; i -= 4) {
		unsigned int d = (v >> i) & 0xf;

		if (d || n || i == 0)
			buf[2 + n++] = "0123456789abcdef"[d];
	}
	buf[2 + n] = 0;
	put(b, buf);
}

/*
 * The VMM's own code touched poisoned memory: it cannot go on (the load
 * would fault again), and there is no guest instruction to blame. Say so on
 * one report line and exit, as QEMU does for its own poison consumption.
 */
static void die_consumed(const siginfo_t *si)
{
	struct line_buf b = { .n = 0 };
	struct gpa_extent ext;
	/* the page at si_addr: si_addr_lsb is not trusted here */
	int in_ram = guest_mem && !memslot_translate(guest_mem, (uintptr_t)si->si_addr, 12, &ext);

	put(&b, "{\"event\":\"sigbus\",\"si_code\":\"");
	put(&b, sigbus_code_name(si->si_code));
	put(&b, "\",\"hva\":\"");
	put_hex(&b, (uintptr_t)si->si_addr);
	put(&b, "\",\"gpa\":");
	if (in_ram) {
		put(&b, "\"");
		put_hex(&b, ext.gpa);
		put(&b, "\"");
	} else {
		put(&b, "null");
	}
	/* in the words of QEMU's MEMORY_FAILURE event, as mce_event_report() */
	put(&b, in_ram ? ",\"recipient\":\"guest\"" : ",\"recipient\":\"hypervisor\"");
	put(&b, ",\"action\":\"fatal\",\"action_required\":");
	put(&b, si->si_code == BUS_MCEERR_AR ? "true" : "false");
	put(&b, ",\"recursive\":false,\"reason\":\"");
	if (si->si_code == SI_KERNEL)
		/*
		 * x86's machine-check code when memory_failure() could not
		 * handle an action-required error (kill_me_now(): 6.1 for a
		 * THP it cannot split): no address, so no page to tell the
		 * guest of, and the access would only fault again
		 */
		put(&b, "SIGBUS from the kernel without an address (SI_KERNEL): a memory error it "
		    "could not recover, no page to tell the guest of");
	else if (si->si_code != BUS_MCEERR_AR && si->si_code != BUS_MCEERR_AO)
		put(&b, "SIGBUS that is not a memory error (a bad access by the VMM itself)");
	else if (in_ram)
		put(&b, "the VMM itself consumed poisoned guest memory");
	else
		put(&b, "the VMM consumed poisoned memory outside guest RAM");
	put(&b, "\"}\n");
	/*
	 * _exit() skips atexit(): remove the memslot table here, and first, so
	 * that no stdout, however stuck, can keep it.
	 */
	guest_ram_unpublish();
	/* after the lines queued before it; bounded: nobody may read stdout */
	report_write_last(b.s, b.n, 1000);
	_exit(3);
}

/* Tell the monitor that an event is queued. */
static void wake_monitor(void)
{
	if (write(ao_pipe[1], "", 1) < 0) {
		/* pipe full: the monitor is already due to drain */
	}
}

/* Async-signal-safe: atomics only, no lock a handler could deadlock on. */
static void count_foreign(const struct sigbus_event *ev)
{
	unsigned long n = __atomic_fetch_add(&foreign.count, 1, __ATOMIC_ACQ_REL);

	__atomic_store_n(&foreign.last_code, ev->code, __ATOMIC_RELAXED);
	__atomic_store_n(&foreign.last_sender,
			 (uint64_t)(uint32_t)ev->sender_pid << 32 | (uint32_t)ev->sender_uid,
			 __ATOMIC_RELEASE);
	if (n < SIGBUS_FOREIGN_KEPT) {
		foreign.first[n] = *ev;
		__atomic_store_n(&foreign.ready[n], 1, __ATOMIC_RELEASE);
	}
}

static void on_sigbus(int sig, siginfo_t *si, void *uctx)
{
	struct sigbus_event ev = { 0 };
	int saved = errno;

	(void)sig;
	(void)uctx;
	ev.code = si->si_code;
	ev.tid = syscall(SYS_gettid);
	ev.t_ns = monotonic_ns();

	if (SIGBUS_FROM_USER(si->si_code)) {
		/*
		 * kill(2), sigqueue(3) or tgkill(2) from some process: it names
		 * no address (si_addr is not even set), it is not a memory error
		 * and no instruction faulted, so returning is safe. Report who
		 * sent it and go on; the guest is not affected.
		 */
		ev.sender_pid = si->si_pid;
		ev.sender_uid = si->si_uid;
		count_foreign(&ev);
		wake_monitor();
		errno = saved;
		return;
	}
	ev.addr = (uintptr_t)si->si_addr;
	ev.lsb = si->si_addr_lsb;
	if (si->si_code == BUS_MCEERR_AR && madvise_page) {
		/*
		 * Not a consumption: since Linux 6.11 memory_failure() signals
		 * the thread that called madvise(MADV_HWPOISON), from inside
		 * the system call (no instruction faulted, returning is safe),
		 * once for each of its mappings of the page.
		 */
		int other = (ev.addr & ~0xfffUL) != madvise_page;

		madvise_ev[other] = ev;
		madvise_ar |= 1 << other;
	} else if (si->si_code == BUS_MCEERR_AR && this_thread && this_thread->in_kvm_run) {
		/* KVM found the poison on a guest access; KVM_RUN returns EINTR. */
		this_thread->ar = ev;
		this_thread->ar_pending = 1;
	} else if (si->si_code == BUS_MCEERR_AO) {
		ao_ring_push(&events, &ev);
		wake_monitor();
	} else {
		die_consumed(si);
	}
	errno = saved;
}

static void on_kick(int sig)
{
	(void)sig;
	if (this_thread && this_thread->run)
		this_thread->run->immediate_exit = 1;
}

int sigbus_madvise_hwpoison(void *page, struct sigbus_event ev[2], int *got)
{
	int r, e;

	madvise_ar = 0;
	madvise_page = (uintptr_t)page;
	r = madvise(page, 4096, MADV_HWPOISON);
	e = errno;
	madvise_page = 0;
	*got = madvise_ar;
	madvise_ar = 0;
	ev[0] = madvise_ev[0];
	ev[1] = madvise_ev[1];
	errno = e;
	return r;
}

/*
 * A hugetlb salvage's poison marker (hugetlb_salvage.h), made in its scratch
 * page before the move into guest RAM at gpa. Since 6.11 the kernel's AR
 * for it reaches this thread inside the call, in the vCPU thread or the
 * monitor, whichever salvages: not a consumption, said and ignored, as the
 * AO an early-kill VMM got for it before 6.11 is (ao_dispatch.c).
 */
static int salvage_marker(void *page, uint64_t gpa)
{
	struct sigbus_event ev[2];
	int r, got, e, i;

	r = sigbus_madvise_hwpoison(page, ev, &got);
	e = errno;
	for (i = 0; i < 2; i++)
		if (got & (1 << i))
			report("sigbus", "\"si_code\":\"BUS_MCEERR_AR\",\"hva\":\"%#lx\",\"lsb\":%d,"
			       "\"origin\":\"salvage_marker\",\"action\":\"ignore\",\"reason\":"
			       "\"the poison marker a salvage made for GPA %#llx before moving it "
			       "into guest RAM\"", (unsigned long)ev[i].addr, ev[i].lsb,
			       (unsigned long long)gpa);
	errno = e;
	return r;
}

void sigbus_queue_ao(const struct sigbus_event *ev)
{
	struct sigbus_event ao = *ev;

	ao.code = BUS_MCEERR_AO;
	ao_ring_push(&events, &ao);
	wake_monitor();
}

int sigbus_pop_event(struct sigbus_event *ev)
{
	return ao_ring_pop(&events, ev);
}

unsigned long sigbus_ao_overflows(void)
{
	return ao_ring_dropped(&events);
}

unsigned long sigbus_foreign_count(void)
{
	return __atomic_load_n(&foreign.count, __ATOMIC_ACQUIRE);
}

int sigbus_foreign_kept(unsigned int i, struct sigbus_event *ev)
{
	if (i >= SIGBUS_FOREIGN_KEPT || !__atomic_load_n(&foreign.ready[i], __ATOMIC_ACQUIRE))
		return 0;
	*ev = foreign.first[i];
	return 1;
}

int sigbus_foreign_last(struct sigbus_event *ev)
{
	uint64_t sender = __atomic_load_n(&foreign.last_sender, __ATOMIC_ACQUIRE);

	if (!sigbus_foreign_count())
		return 0;
	memset(ev, 0, sizeof(*ev));
	ev->code = __atomic_load_n(&foreign.last_code, __ATOMIC_RELAXED);
	ev->sender_pid = (pid_t)(sender >> 32);
	ev->sender_uid = (uid_t)(uint32_t)sender;
	return 1;
}

int sigbus_install(const struct memslot_table *mem)
{
	struct sigaction sa;

	guest_mem = mem;
	if (pipe2(ao_pipe, O_CLOEXEC | O_NONBLOCK))
		return -1;
	/*
	 * SA_RESTART: a signal must not turn a blocked write(2) of a report
	 * line (stdout into a full pipe) into EINTR, which stdio takes as an
	 * error and drops the line. KVM_RUN is not restarted by it: KVM
	 * returns -EINTR itself, which is what the vCPU loop waits for.
	 */
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, NULL))
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_kick;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIG_VCPU_KICK, &sa, NULL))
		return -1;
	/* the handler knows the salvage's markers now: let it make them */
	hugetlb_salvage_set_poison(salvage_marker);
	return ao_pipe[0];
}

struct sigbus_thread *sigbus_thread_new(struct kvm_run *run)
{
	struct sigbus_thread *t = calloc(1, sizeof(*t));

	if (!t) {
		pr_err("out of memory for a vCPU thread's SIGBUS state");
		return NULL;
	}
	t->run = run;
	return t;
}

void sigbus_bind_thread(struct sigbus_thread *t)
{
	this_thread = t;
}
