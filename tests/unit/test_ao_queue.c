// SPDX-License-Identifier: GPL-2.0
/*
 * A vCPU's AO queue with nothing but the queue and the vCPU's thread state:
 * bounded, refused once the thread has closed, deferred entries kept ahead
 * of new ones, and kicks only to a thread that exists and has not left.
 */
#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "unit.h"
#include "core/vcpu_thread.h"
#include "mce/ao_queue.h"

static struct pending_mce entry(uint64_t addr)
{
	struct pending_mce p;

	memset(&p, 0, sizeof(p));
	p.mce.addr = addr;
	return p;
}

UNIT_TEST(ao_queue, "AO queue of one vCPU: bound, close, deferred, kick")
{
	static struct ao_queue q;
	static struct pending_mce out[MCE_QUEUE_LEN];
	struct vcpu_thread t = { 0 };
	struct pending_mce p = entry(0x1000);
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	unsigned int i, n;

	/* the kicks go to this thread */
	sigaction(SIG_VCPU_KICK, &ign, &old);
	vcpu_thread_init(&t);
	vcpu_thread_reset(&t);
	ao_queue_reset(&q, &t);

	/* a thread not started yet is not kicked: it looks at the top of its loop */
	CHECK_EQ(ao_queue_push(&q, &t, &p), QUEUED);
	CHECK_EQ(ao_queue_kick_if_queued(&q, &t, 0), 0);
	vcpu_thread_started(&t, pthread_self());
	CHECK_EQ(ao_queue_kick_if_queued(&q, &t, 0), 1);

	/* bounded: a full queue says whether it holds deferred entries */
	for (i = 1; i < MCE_QUEUE_LEN; i++) {
		p = entry(0x1000 + i * 4096ULL);
		CHECK_EQ(ao_queue_push(&q, &t, &p), QUEUED);
	}
	CHECK_EQ(ao_queue_push(&q, &t, &p), QUEUE_FULL);

	/* two taken and put back (deferred), the rest delivered, one came meanwhile */
	n = ao_queue_peek(&q, &t, out);
	CHECK_EQ(n, MCE_QUEUE_LEN);
	CHECK_EQ(q.len, MCE_QUEUE_LEN);		/* still counted while delivered */
	CHECK_EQ(ao_queue_push(&q, &t, &p), QUEUE_FULL);
	out[1] = out[5];
	out[1].held_why = "no bank free";
	CHECK(ao_queue_deferred_why(&q, &t) == NULL, "nothing held back yet, so no reason");
	ao_queue_settle(&q, &t, n, out, 2, 0);
	CHECK_EQ(q.len, 2);
	CHECK_EQ(q.deferred, 2);
	/* why they wait, as the last one put back says: a full queue's reason */
	CHECK(ao_queue_deferred_why(&q, &t) && !strcmp(ao_queue_deferred_why(&q, &t), "no bank free"),
	      "the held entries' reason");
	CHECK_EQ(q.entries[1].mce.addr, 0x6000);
	p = entry(0x900000);
	CHECK_EQ(ao_queue_push(&q, &t, &p), QUEUED);
	n = ao_queue_peek(&q, &t, out);
	p = entry(0xa00000);
	CHECK_EQ(ao_queue_push(&q, &t, &p), QUEUED);	/* arrives during delivery */
	ao_queue_settle(&q, &t, n, out, 1, 0);
	CHECK_EQ(q.len, 2);
	CHECK_EQ(q.entries[0].mce.addr, 0x1000);	/* the deferred one first */
	CHECK_EQ(q.entries[1].mce.addr, 0xa00000);
	CHECK(ao_queue_deferred_why(&q, &t) == NULL, "the one put back said no reason");

	/* full of deferred entries: the guest's machine check holds them */
	while (ao_queue_push(&q, &t, &p) == QUEUED)
		;
	CHECK_EQ(ao_queue_push(&q, &t, &p), QUEUE_FULL_DEFERRED);

	/* closed: takes nothing, is not kicked, gives up what it held */
	vcpu_thread_close(&t);
	CHECK_EQ(ao_queue_push(&q, &t, &p), VCPU_CLOSED);
	CHECK_EQ(ao_queue_kick_if_queued(&q, &t, 1), 0);
	CHECK_EQ(vcpu_thread_kick(&t), 0);
	CHECK_EQ(ao_queue_drain(&q, &t, out), MCE_QUEUE_LEN);
	CHECK_EQ(q.len, 0);

	/* a reset vCPU takes AOs again once its new thread started */
	vcpu_thread_reset(&t);
	ao_queue_reset(&q, &t);
	CHECK_EQ(ao_queue_push(&q, &t, &p), QUEUED);
	CHECK_EQ(vcpu_thread_kick(&t), 0);
	vcpu_thread_started(&t, pthread_self());
	CHECK_EQ(vcpu_thread_kick(&t), 1);
	CHECK_EQ(ao_queue_kick_if_queued(&q, &t, 0), 1);

	sigaction(SIG_VCPU_KICK, &old, NULL);
}
