/* SPDX-License-Identifier: GPL-2.0 */
/* The guest's ucalls (include/hwlab_abi.h): decoded into report lines. */
#ifndef HWLAB_UCALL_H
#define HWLAB_UCALL_H

struct vcpu;

/*
 * The vCPU stopped at an OUT to UCALL_PORT. Returns 0 to run on, 1 when the
 * guest finished on this vCPU (state set), -1 on a bad ucall (reported).
 */
int ucall_handle(struct vcpu *v);
/* At vCPU creation: a full guest_log rate limit. */
void ucall_init_vcpu(struct vcpu *v);
/* A guest_log_suppressed line for the guest_log lines held back, if any. */
void ucall_report_suppressed(struct vcpu *v);

#endif
