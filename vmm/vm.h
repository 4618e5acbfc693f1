/* SPDX-License-Identifier: GPL-2.0 */
/* The VM and its vCPUs: the state every part of the VMM works on. */
#ifndef HWLAB_VM_H
#define HWLAB_VM_H

#include <pthread.h>
#include <stdint.h>
#include <linux/kvm.h>

#include "guest_image.h"
#include "hwlab_abi.h"
#include "mce_delivery.h"
#include "memslot.h"
#include "options.h"
#include "ratelimit.h"
#include "sigbus.h"

enum vcpu_state {
	VCPU_RUNNING,
	VCPU_DONE,		/* guest reported done with intact checksums */
	VCPU_FAILED,		/* guest or VMM error; reported */
	VCPU_STOPPED,		/* asked to stop (another vCPU failed or reset) */
};

struct vm;

struct vcpu {
	struct vm *vm;
	unsigned int id;
	int fd;
	struct kvm_run *run;
	pthread_t thread;
	struct sigbus_thread sig;
	enum vcpu_state state;
	struct vcpu_mce mce;		/* mce_delivery.c */
	struct ratelimit log_limit;	/* guest_log lines (ucall.c) */
};

struct vm {
	const struct vmm_options *opt;
	int kvm_fd;
	int vm_fd;
	long run_size;
	struct kvm_cpuid2 *cpuid;
	struct memslot_table mem;
	struct vm_poison poison;	/* mce_delivery.c */
	struct guest_image image;
	uint64_t entry;
	unsigned int boot_count;	/* 1 at first boot, +1 per reset */
	int poison_hook_fired;		/* the test hook ran (it runs once) */
	struct vcpu vcpus[GUEST_MAX_VCPUS];
	volatile int stop;		/* all vCPUs leave their loops */
	volatile int reset_requested;
};

/* /dev/kvm, KVM_CREATE_VM, CPUID and guest RAM; 0, or -1 after a message. */
int vm_create(struct vm *vm, const struct vmm_options *opt);
/* Make every vCPU leave its loop; reset: reboot the guest afterwards. */
void vm_stop(struct vm *vm, int reset);
/* Kick every vCPU out of KVM_RUN so it looks at its queue and vm->stop. */
void vm_kick_all(struct vm *vm);

#endif
