/* SPDX-License-Identifier: GPL-2.0 */
/* Test hook: poison guest pages from inside the VMM at a known point. */
#ifndef HWLAB_POISON_HOOK_H
#define HWLAB_POISON_HOOK_H

struct vcpu;

/* On vCPU 0 at the end of pass --poison-pass; 0, or -1 (reported). */
int poison_hook_run(struct vcpu *v);

#endif
