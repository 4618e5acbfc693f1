/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Machine-check delivery policy: which SIGBUS becomes which vMCE on which
 * vCPU, and when not. It owns what the guest was told (the notified list),
 * each vCPU's queue of action-optional errors (ao_queue.h), the spreads of
 * lost huge pages (spread.h), the MCA broadcast (broadcast.h) and the
 * repeat-AR guard. The poisoned pages themselves are guest memory's
 * (vm->poisoned, core/poison_list.h); the vCPU threads' lifecycle is
 * core/vcpu_thread.h's. struct vm and struct vcpu hold this state by
 * pointer: core/ does not know its layout.
 */
#ifndef HWLAB_MCE_DELIVERY_H
#define HWLAB_MCE_DELIVERY_H

#include <pthread.h>
#include <stdint.h>

#include "core/kvm_stats.h"
#include "core/poison_list.h"
#include "mce/ao_queue.h"
#include "mce/sigbus.h"
#include "mce/smca.h"
#include "mce/spread.h"

/*
 * Why an AO waits in its vCPU's queue (pending_mce.held_why): said when it
 * is finally not delivered, and by a full queue that holds such AOs.
 */
#define AO_HELD_IN_MCE		"the guest has not finished its machine checks"
#define AO_HELD_NO_BANK		"the guest has not read the deferred errors in its banks " \
				"(no bank free)"

/* A guest that takes the same AR this many times in a row is stopped. */
#define AR_REPEAT_LIMIT		16

struct vm;
struct vcpu;

/* Per VM: vm->poison. */
struct vm_poison {
	pthread_mutex_t lock;		/* guards notified, spread, ao_handled */
	struct poison_list notified;	/* pages the guest got a machine check for */
	unsigned long injected;
	unsigned long not_delivered;	/* AOs no vCPU took (reported each) */
	unsigned long ao_handled;	/* AOs the monitor has dealt with, any outcome */
	struct mce_spread spread[MAX_SPREADS];	/* under lock; end == 0: free */
	unsigned int spreads_active;	/* read without the lock to skip the work */
	/*
	 * The vCPU whose deferred-error interrupt carries the spread's batch
	 * now, or -1: the guest's MCE record pool is one for all its CPUs, so
	 * one batch at a time for the VM, paced by that vCPU (atomic).
	 */
	int spread_vcpu;
	/*
	 * 1 while that batch has been read and waits for the guest to be seen
	 * idle: only then does the monitor kick fast (atomic). A guest that
	 * never reads its banks is not worth 500 kicks a second.
	 */
	int spread_wait_idle;
	pthread_cond_t ao_handled_cond;
};

/* Per vCPU: v->mce. queue and broadcasts under the vCPU's thread.lock. */
struct vcpu_mce {
	struct ao_queue queue;
	uint64_t last_injected_gpa;	/* for the guest's "matches_injection" */
	int injected;			/* last_injected_gpa is one: 0 is a GPA too */
	uintptr_t last_ar_addr;		/* repeat-AR guard */
	unsigned int ar_repeats;
	unsigned int broadcasts;	/* other vCPUs' #MCs not yet passed on */
	unsigned int broadcast_origin;	/* the vCPU of the last of them */
	struct smca_vcpu smca;		/* the SMCA view's registers (smca.h) */
	int dfr_raise;			/* raise dfr_vector before the next KVM_RUN */
	uint8_t dfr_vector;
	uint64_t spread_batch_ns;	/* when its last spread batch went (the pace) */
	/*
	 * KVM's "blocking" statistic: whether the vCPU sits in HLT, read by
	 * the monitor without kicking it (SMCA VMs only; fd -1: no such
	 * statistic, and the monitor kicks to see), and its last kick.
	 */
	struct kvm_stat_ref blocking;
	uint64_t spread_kick_ns;	/* the monitor thread's own */
	unsigned long spread_kicks;	/* kicks while a batch waited for the idle (atomic) */
};

/* Allocate vm->poison / v->mce (kept for the process's life): 0, or -1 after a message. */
int mce_delivery_init_vm(struct vm *vm);
int mce_delivery_init_vcpu(struct vcpu *v);
/* A reset vCPU has nothing queued. */
void mce_delivery_reset_vcpu(struct vcpu *v);

/*
 * On the vCPU thread, before every KVM_RUN: the AR its SIGBUS handler
 * recorded (if any), then the queued AOs. Return 0 to run on, or -1 when
 * the vCPU must stop (already reported, state set, VM stopping).
 */
int mce_delivery_run_pending(struct vcpu *v);

/*
 * On the monitor thread: an AO from the kernel; translate, dedupe, queue on
 * a running vCPU, or report that none could take it.
 */
void mce_delivery_action_optional(struct vm *vm, const struct sigbus_event *ev);
/*
 * After a restore: an AO the source owed the guest for the 4 KiB page at
 * gpa (heard there but not told, or poisoned without a marker here), queued
 * as the kernel's would have been; never a salvage of this VM's healthy
 * memory.
 */
void mce_delivery_owed_ao(struct vm *vm, uint64_t gpa);

/*
 * On the vCPU thread, as it leaves its loop, after vcpu_thread_close() (it
 * takes no more AOs): hand what is still queued to a vCPU that runs (or
 * report it not delivered).
 */
void mce_delivery_close_vcpu(struct vcpu *v);

/*
 * Kick v out of KVM_RUN when it holds AOs, e.g. deferred ones that wait for
 * the guest to finish a machine check, or pages of a lost extent are being
 * told. While a lost extent's next batch waits for the guest to idle, a
 * vCPU KVM says is not blocked in HLT is left to work, and kicked only
 * every SPREAD_KICK_BUSY_NS (the busy fallback needs an exit to act).
 * Returns 1 if kicked.
 */
#define SPREAD_KICK_BUSY_NS	20000000ull
int mce_delivery_kick_if_queued(struct vcpu *v);
/*
 * Whether a lost huge page's next batch waits only for the guest to be
 * seen idle: the monitor looks more often meanwhile (KVM's "blocking"
 * statistic, or a kick where the kernel has none).
 */
int mce_delivery_spreading(struct vm *vm);

/* Test hook: how many AOs the monitor has dealt with, and wait for more. */
unsigned long mce_delivery_ao_handled(struct vm *vm);
void mce_delivery_wait_ao_handled(struct vm *vm, unsigned long want, unsigned int timeout_s);

unsigned long mce_delivery_injected(struct vm *vm);
unsigned long mce_delivery_not_delivered(struct vm *vm);
/*
 * What the guest was told, for a snapshot or a migration (a copy: caller
 * frees); and at the restore, a page it was told of at the source. 0, or -1
 * on allocation failure.
 */
int mce_delivery_notified_copy(struct vm *vm, struct poison_list *out);
int mce_delivery_mark_told(struct vm *vm, uint64_t gpa, uint64_t len);
/* Reset: the rebooted guest was told nothing yet. */
void mce_delivery_forget_notified(struct vm *vm);

#endif
