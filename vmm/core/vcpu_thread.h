/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A vCPU's thread as the other threads see it: whether it exists yet (a
 * kick may go to it) and whether it has left its loop (it may be joined
 * and gone: a kick must not). Its lock also guards what others hand to the
 * thread (the AO queue, mce/ao_queue.h), so that a handoff and the kick
 * after it see the same state.
 */
#ifndef HWLAB_VCPU_THREAD_H
#define HWLAB_VCPU_THREAD_H

#include <pthread.h>
#include <signal.h>

/* Kicks a vCPU thread out of KVM_RUN (its handler: mce/sigbus.c). */
#define SIG_VCPU_KICK SIGUSR1

struct vcpu_thread {
	pthread_mutex_t lock;	/* guards started, closed, and what is handed over */
	pthread_t id;		/* valid once started */
	int started;		/* the thread exists: kicks may go to it */
	int closed;		/* it left its loop: takes nothing more */
};

void vcpu_thread_init(struct vcpu_thread *t);
/* A reset vCPU has no thread yet and takes work again. */
void vcpu_thread_reset(struct vcpu_thread *t);
/* The main thread created t's thread: from now on it can be kicked. */
void vcpu_thread_started(struct vcpu_thread *t, pthread_t id);
/* On the thread, as it leaves its loop: no more kicks or handoffs. */
void vcpu_thread_close(struct vcpu_thread *t);
/*
 * Kick it out of KVM_RUN unless it has not started or has closed; the
 * _locked one under t->lock. Returns 1 if kicked.
 */
int vcpu_thread_kick(struct vcpu_thread *t);
int vcpu_thread_kick_locked(struct vcpu_thread *t);

#endif
