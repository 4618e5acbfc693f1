/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SIGBUS from the memory-failure code: the handler only records the event
 * (it is async-signal-safe); the vCPU loop and the monitor thread act on it.
 */
#ifndef HWLAB_SIGBUS_H
#define HWLAB_SIGBUS_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/kvm.h>

#include "core/memslot.h"
#include "core/vcpu_thread.h"	/* SIG_VCPU_KICK */

struct sigbus_event {
	int code;		/* si_code: BUS_MCEERR_AO/AR, or SIGBUS_FROM_USER() */
	uintptr_t addr;		/* si_addr */
	int lsb;		/* si_addr_lsb as the kernel gave it; not trusted */
	pid_t tid;		/* thread that received it */
	uint64_t t_ns;		/* CLOCK_MONOTONIC at the handler */
	pid_t sender_pid;	/* SIGBUS_FROM_USER(): who sent it */
	uid_t sender_uid;
};

/*
 * si_code of a SIGBUS that a process sent (kill -BUS, sigqueue, tgkill):
 * SI_USER is 0 and the others are negative. Only the kernel sets a positive
 * si_code; rt_sigqueueinfo() refuses one from another process.
 */
#define SIGBUS_FROM_USER(code)	((code) <= 0)

/* Per-thread state the handler sees; one per vCPU thread. */
struct sigbus_thread {
	volatile sig_atomic_t in_kvm_run;	/* AR now came from KVM_RUN */
	volatile sig_atomic_t ar_pending;
	struct sigbus_event ar;
	struct kvm_run *run;			/* for kicks: immediate_exit */
};

/*
 * Install the SIGBUS handler and the vCPU kick handler (SIGUSR1). mem is
 * used, read-only, to name the GPA in the message when the VMM itself
 * consumes poison. Returns the read end of a pipe that becomes readable
 * when an AO event is queued.
 */
int sigbus_install(const struct memslot_table *mem);
/* A vCPU thread's, kept for the process's life; NULL after a message. */
struct sigbus_thread *sigbus_thread_new(struct kvm_run *run);
void sigbus_bind_thread(struct sigbus_thread *t);

/*
 * Take the oldest queued AO; returns 0 when none is left. Only the kernel's
 * memory-error signals go through this ring (AO_RING_LEN entries): a
 * process that floods the VMM with kill -BUS must not take its capacity.
 */
/*
 * madvise(page, 4096, MADV_HWPOISON) by this thread (page 4 KiB aligned):
 * since Linux 6.11 (madvise passes MF_ACTION_REQUIRED) the kernel answers
 * with BUS_MCEERR_AR to the caller from inside the call, and sends no AO to
 * an early-kill thread; before, nothing until an access. An AR during the
 * call is kept, not taken for the VMM consuming poison: *got has bit 0 with
 * ev[0] if one named that page, bit 1 with ev[1] if one named another
 * mapping of it (the kernel signals the caller once per mapping it has of
 * the page). Returns madvise's result, errno as it left it.
 */
int sigbus_madvise_hwpoison(void *page, struct sigbus_event ev[2], int *got);
/* Hand the monitor ev as the AO the kernel would have sent an early-kill thread. */
void sigbus_queue_ao(const struct sigbus_event *ev);

int sigbus_pop_event(struct sigbus_event *ev);
/* AOs dropped because the ring was full (counted exactly). */
unsigned long sigbus_ao_overflows(void);

/*
 * SIGBUS that processes sent (SIGBUS_FROM_USER()): only counted in the
 * handler, with the first SIGBUS_FOREIGN_KEPT of them kept whole and the
 * sender of the last one, so that a flood costs no memory and no ring slot.
 */
#define SIGBUS_FOREIGN_KEPT	5

/* How many the handlers have seen. */
unsigned long sigbus_foreign_count(void);
/* The i-th (i < SIGBUS_FOREIGN_KEPT) once its handler has stored it: 1, else 0. */
int sigbus_foreign_kept(unsigned int i, struct sigbus_event *ev);
/* The last one's si_code and sender (code, sender_pid, sender_uid); 0 if none yet. */
int sigbus_foreign_last(struct sigbus_event *ev);

const char *sigbus_code_name(int code);

#endif
