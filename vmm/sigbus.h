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

#include "memslot.h"

struct sigbus_event {
	int code;		/* BUS_MCEERR_AO or BUS_MCEERR_AR */
	uintptr_t addr;		/* si_addr */
	unsigned int lsb;	/* si_addr_lsb */
	pid_t tid;		/* thread that received it */
	uint64_t t_ns;		/* CLOCK_MONOTONIC at the handler */
};

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
void sigbus_bind_thread(struct sigbus_thread *t);

/* Take the oldest queued AO event; returns 0 when none is left. */
int sigbus_pop_ao(struct sigbus_event *ev);
/* Events dropped because the AO ring was full (never expected). */
unsigned long sigbus_ao_overflows(void);

#define SIG_VCPU_KICK SIGUSR1

const char *sigbus_code_name(int code);

#endif
