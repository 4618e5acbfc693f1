/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A stop that does not end: a vCPU still in its loop long after the stop
 * (in the kernel, where /proc says), reported instead of waited for.
 */
#ifndef HWLAB_VCPU_STUCK_H
#define HWLAB_VCPU_STUCK_H

struct vm;

/*
 * A vCPU leaves KVM_RUN within microseconds of its kick; one that has not
 * after this long is stuck, and waiting on would turn a stop into a hang.
 */
#define STOP_GRACE_NS	(10ULL * 1000 * 1000 * 1000)

/* A vcpu_stuck line for each vCPU that still runs, with where its thread is. */
void report_stuck_vcpus(struct vm *vm);

#endif
