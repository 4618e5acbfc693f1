/* SPDX-License-Identifier: GPL-2.0 */
/* The VM and its vCPUs: the state every part of the VMM works on. */
#ifndef HWLAB_VM_H
#define HWLAB_VM_H

#include <pthread.h>
#include <stdint.h>
#include <linux/kvm.h>

#include "x86/cpuid.h"
#include "core/device.h"
#include "hwlab_abi.h"
#include "mce/mce_delivery.h"
#include "core/memslot.h"
#include "options.h"
#include "core/ratelimit.h"
#include "mce/sigbus.h"

enum vcpu_state {
	VCPU_RUNNING,
	VCPU_DONE,		/* guest reported done with intact checksums */
	VCPU_FAILED,		/* guest or VMM error; reported */
	VCPU_STOPPED,		/* asked to stop (another vCPU failed or reset) */
};

struct vm;
struct guest_kind;
struct guest_state;

struct vcpu {
	struct vm *vm;
	unsigned int id;
	int fd;
	struct kvm_run *run;
	pthread_t thread;
	struct sigbus_thread sig;
	enum vcpu_state state;
	int tid;			/* its thread's, for a stop that never ends */
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
	/* the guest's kind (boot/guest_boot.h): its ops, picked once, and its own state */
	const struct guest_kind *kind;
	struct guest_state *guest;
	enum cpu_vendor vendor;		/* of the vCPUs' CPUID */
	int xsetbv_exits;		/* kvm_dev_xsetbv_exits() */
	unsigned long long xsave_components;	/* XCR0's bits the CPUID offers */
	int mce_style;			/* MCE_STYLE_* (mce.h) */
	/* the kind's MCE choices, for mce/ (struct guest_kind says what they mean) */
	int mce_as_vcpu_vendor;
	int mce_spread;
	uint64_t entry;
	struct device_bus devices;	/* core/device.c: what the guest kind registered */
	unsigned int boot_count;	/* 1 at first boot, +1 per reset */
	struct vcpu vcpus[GUEST_MAX_VCPUS];
	volatile int stop;		/* all vCPUs leave their loops */
	volatile int reset_requested;
	/*
	 * Kick a vCPU out of KVM_RUN (vm_kick_all()): registered by
	 * mce_delivery_init_vm(), whose lock still guards the vCPU threads'
	 * lifecycle; core/ does not call up into mce/.
	 */
	int (*kick_vcpu)(struct vcpu *v, int only_if_queued);
};

/* /dev/kvm, KVM_CREATE_VM and CPUID; 0, or -1 after a message. */
int vm_create(struct vm *vm, const struct vmm_options *opt);
/* Make every vCPU leave its loop; reset: reboot the guest afterwards. */
void vm_stop(struct vm *vm, int reset);
/* Kick every vCPU out of KVM_RUN so it looks at its queue and vm->stop. */
void vm_kick_all(struct vm *vm);

#endif
