// SPDX-License-Identifier: GPL-2.0
#include "core/vcpu_thread.h"

void vcpu_thread_init(struct vcpu_thread *t)
{
	pthread_mutex_init(&t->lock, NULL);
}

void vcpu_thread_reset(struct vcpu_thread *t)
{
	pthread_mutex_lock(&t->lock);
	t->closed = 0;
	t->started = 0;
	pthread_mutex_unlock(&t->lock);
}

void vcpu_thread_started(struct vcpu_thread *t, pthread_t id)
{
	pthread_mutex_lock(&t->lock);
	t->id = id;
	t->started = 1;
	pthread_mutex_unlock(&t->lock);
}

void vcpu_thread_close(struct vcpu_thread *t)
{
	pthread_mutex_lock(&t->lock);
	t->closed = 1;
	pthread_mutex_unlock(&t->lock);
}

int vcpu_thread_kick_locked(struct vcpu_thread *t)
{
	/*
	 * Started and not closed: a thread that exists and has not been
	 * joined. One not started yet looks at its work at the top of its loop.
	 */
	if (!t->started || t->closed)
		return 0;
	pthread_kill(t->id, SIG_VCPU_KICK);
	return 1;
}

int vcpu_thread_kick(struct vcpu_thread *t)
{
	int kicked;

	pthread_mutex_lock(&t->lock);
	kicked = vcpu_thread_kick_locked(t);
	pthread_mutex_unlock(&t->lock);
	return kicked;
}
