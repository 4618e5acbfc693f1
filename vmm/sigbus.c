// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include "sigbus.h"

#include "clock.h"
#include "guest_ram.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#define AO_RING 256

static __thread struct sigbus_thread *this_thread;
static const struct memslot_table *guest_mem;
static int ao_pipe[2] = { -1, -1 };

/* Single-consumer ring: handlers on any thread produce, the monitor consumes. */
static struct {
	struct sigbus_event ev;
	volatile int ready;
} ao_ring[AO_RING];
static unsigned long ao_head, ao_tail, ao_dropped;

const char *sigbus_code_name(int code)
{
	switch (code) {
	case BUS_MCEERR_AO:
		return "BUS_MCEERR_AO";
	case BUS_MCEERR_AR:
		return "BUS_MCEERR_AR";
	}
	return "other";
}

/* write(2) a string; async-signal-safe. */
static void put(const char *s)
{
	ssize_t r = write(STDOUT_FILENO, s, strlen(s));

	(void)r;
}

static void put_hex(uint64_t v)
{
	char buf[19] = "0x";
	int i, n = 0;

	for (i = 60; i >= 0; i -= 4) {
		unsigned int d = (v >> i) & 0xf;

		if (d || n || i == 0)
			buf[2 + n++] = "0123456789abcdef"[d];
	}
	buf[2 + n] = 0;
	put(buf);
}

/*
 * The VMM's own code touched poisoned memory: it cannot go on (the load
 * would fault again), and there is no guest instruction to blame. Say so on
 * one report line and exit, as QEMU does for its own poison consumption.
 */
static void die_consumed(const siginfo_t *si)
{
	struct gpa_extent ext;
	int in_ram = guest_mem && !memslot_translate(guest_mem, (uintptr_t)si->si_addr,
						       si->si_addr_lsb, &ext);

	put("{\"event\":\"sigbus\",\"si_code\":\"");
	put(sigbus_code_name(si->si_code));
	put("\",\"hva\":\"");
	put_hex((uintptr_t)si->si_addr);
	put("\",\"gpa\":");
	if (in_ram) {
		put("\"");
		put_hex(ext.gpa);
		put("\"");
	} else {
		put("null");
	}
	put(",\"action\":\"fatal\",\"reason\":\"");
	if (si->si_code != BUS_MCEERR_AR && si->si_code != BUS_MCEERR_AO)
		put("SIGBUS that is not a memory error");
	else if (in_ram)
		put("the VMM itself consumed poisoned guest memory");
	else
		put("the VMM consumed poisoned memory outside guest RAM");
	put("\"}\n");
	guest_ram_unpublish();	/* _exit() skips atexit(): remove the memslot table here */
	_exit(3);
}

static void on_sigbus(int sig, siginfo_t *si, void *uctx)
{
	struct sigbus_event ev;
	int saved = errno;

	(void)sig;
	(void)uctx;
	ev.code = si->si_code;
	ev.addr = (uintptr_t)si->si_addr;
	ev.lsb = si->si_addr_lsb;
	ev.tid = syscall(SYS_gettid);
	ev.t_ns = monotonic_ns();

	if (si->si_code == BUS_MCEERR_AR && this_thread && this_thread->in_kvm_run) {
		/* KVM found the poison on a guest access; KVM_RUN returns EINTR. */
		this_thread->ar = ev;
		this_thread->ar_pending = 1;
	} else if (si->si_code == BUS_MCEERR_AO) {
		unsigned long slot = __atomic_fetch_add(&ao_head, 1, __ATOMIC_ACQ_REL);

		if (slot - __atomic_load_n(&ao_tail, __ATOMIC_ACQUIRE) >= AO_RING) {
			__atomic_fetch_add(&ao_dropped, 1, __ATOMIC_RELAXED);
		} else {
			ao_ring[slot % AO_RING].ev = ev;
			__atomic_store_n(&ao_ring[slot % AO_RING].ready, 1, __ATOMIC_RELEASE);
		}
		if (write(ao_pipe[1], "", 1) < 0) {
			/* pipe full: the monitor is already due to drain */
		}
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

int sigbus_pop_ao(struct sigbus_event *ev)
{
	unsigned long tail = ao_tail;
	volatile int *ready = &ao_ring[tail % AO_RING].ready;

	if (tail == __atomic_load_n(&ao_head, __ATOMIC_ACQUIRE) ||
	    !__atomic_load_n(ready, __ATOMIC_ACQUIRE))
		return 0;
	*ev = ao_ring[tail % AO_RING].ev;
	__atomic_store_n(ready, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&ao_tail, tail + 1, __ATOMIC_RELEASE);
	return 1;
}

unsigned long sigbus_ao_overflows(void)
{
	return __atomic_load_n(&ao_dropped, __ATOMIC_RELAXED);
}

int sigbus_install(const struct memslot_table *mem)
{
	struct sigaction sa;

	guest_mem = mem;
	if (pipe2(ao_pipe, O_CLOEXEC | O_NONBLOCK))
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, NULL))
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_kick;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIG_VCPU_KICK, &sa, NULL))
		return -1;
	return ao_pipe[0];
}

void sigbus_bind_thread(struct sigbus_thread *t)
{
	this_thread = t;
}
