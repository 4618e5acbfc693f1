/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KVM's dirty page log over guest RAM, for a migration's pre-copy: which
 * pages the guest wrote since the last look (KVM_MEM_LOG_DIRTY_PAGES,
 * KVM_GET_DIRTY_LOG, which also clears it). Only the guest's writes are
 * logged: what the VMM itself writes (a reboot's boot area) is not, and a
 * migration that sees a reset starts over.
 */
#ifndef HWLAB_DIRTY_LOG_H
#define HWLAB_DIRTY_LOG_H

#include <stdint.h>

struct vm;

/* One bitmap per slot, a bit per 4 KiB page (bit n: the slot's n-th page). */
struct dirty_log {
	uint64_t *bitmap[8];
	uint64_t words[8];
	unsigned int nr_slots;
};

/*
 * Log every slot's writes from now (on) or stop (off), re-registering each
 * slot with KVM_SET_USER_MEMORY_REGION. 0, or -1 after a message.
 */
int dirty_log_start(struct vm *vm, struct dirty_log *d);
int dirty_log_stop(struct vm *vm, struct dirty_log *d);
/* The pages written since the last call into d's bitmaps (cleared in KVM); how many, or -1. */
long dirty_log_fetch(struct vm *vm, struct dirty_log *d);

#endif
