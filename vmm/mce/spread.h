/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A huge host page lost under a guest that takes only 4 KiB-granular
 * machine checks (Linux): the VMM tells it every other 4 KiB page of the
 * extent, one action-optional error at a time, so that the guest isolates
 * them before it touches them (a touch from its kernel would be fatal).
 * At most the 2 MiB around the page told (mce_spread_window): all of a
 * 2 MiB page, 512 pages of a 1 GiB one. The spreads live in the VM's
 * struct vm_poison, under its lock with the notified list they fill.
 */
#ifndef HWLAB_SPREAD_H
#define HWLAB_SPREAD_H

#include <stdint.h>

#define MAX_SPREADS		8

struct mce_spread {
	uint64_t gpa, end;		/* the part of the lost extent being told */
	uint64_t next;			/* the next page to tell */
	unsigned long told;
	uint64_t t_start;
};

struct vm;
struct vcpu;
struct pending_mce;

/*
 * After an injection for one 4 KiB page of a larger lost extent: remember
 * the part of it around that page, so that its other pages are told too.
 */
void mce_spread_add(struct vm *vm, const struct pending_mce *p);
/*
 * The next untold page of a lost extent, as an AO for v in *p, when the
 * guest can take one now; 0 if there is none to tell now.
 */
int mce_spread_take(struct vcpu *v, struct pending_mce *p);

#endif
