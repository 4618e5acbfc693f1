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
#include "core/memslot.h"
#include "core/poison_list.h"
#include "core/vm_options.h"
#include "core/ratelimit.h"
#include "core/vcpu_thread.h"

enum vcpu_state {
	VCPU_RUNNING,
	VCPU_DONE,		/* guest reported done with intact checksums */
	VCPU_FAILED,		/* guest or VMM error; reported */
	VCPU_STOPPED,		/* asked to stop (another vCPU failed or reset) */
};

struct vm;
/* mce/'s, by pointer: core/ does not know their layout */
struct sigbus_thread;
struct vcpu_mce;
struct vm_poison;
struct guest_kind;
struct guest_state;

struct vcpu {
	struct vm *vm;
	unsigned int id;
	int fd;
	struct kvm_run *run;
	struct vcpu_thread thread;	/* its lifecycle, as other threads see it */
	struct sigbus_thread *sig;	/* what its SIGBUS handler records (sigbus.h) */
	enum vcpu_state state;
	int tid;			/* its thread's, for a stop that never ends */
	struct vcpu_mce *mce;		/* mce_delivery.h */
	struct ratelimit log_limit;	/* guest_log lines (ucall.c) */
};

struct vm {
	const struct vmm_options *opt;
	int kvm_fd;
	int vm_fd;
	long run_size;
	struct kvm_cpuid2 *cpuid;
	struct memslot_table mem;
	struct guest_poison poisoned;	/* every page the kernel reported (poison_list.h) */
	struct vm_poison *poison;	/* mce_delivery.h */
	/* the guest's kind (boot/guest_boot.h): its ops, picked once, and its own state */
	const struct guest_kind *kind;
	struct guest_state *guest;
	enum cpu_vendor vendor;		/* of the vCPUs' CPUID */
	int xsetbv_exits;		/* kvm_dev_xsetbv_exits() */
	unsigned long long xsave_components;	/* XCR0's bits the CPUID offers */
	int mce_style;			/* MCE_STYLE_* (mce.h) */
	unsigned int mce_banks;		/* MCG_CAP's bank count (mce_choose_style()) */
	/* the kind's MCE choices, for mce/ (struct guest_kind says what they mean) */
	int mce_as_vcpu_vendor;
	int mce_spread;
	uint64_t entry;
	struct device_bus devices;	/* core/device.c: what the guest kind registered */
	unsigned int boot_count;	/* 1 at first boot, +1 per reset */
	struct vcpu vcpus[GUEST_MAX_VCPUS];
	volatile int stop;		/* all vCPUs leave their loops */
	/*
	 * vm_pause(): the vCPUs wait outside KVM_RUN, their threads alive and
	 * their queues kept (a snapshot, a migration's last copy); paused
	 * counts those waiting, under pause_lock.
	 */
	volatile int pause;
	unsigned int paused;
	pthread_mutex_t pause_lock;
	pthread_cond_t pause_cond;
	volatile int reset_requested;
};

/* /dev/kvm, KVM_CREATE_VM and CPUID; 0, or -1 after a message. */
int vm_create(struct vm *vm, const struct vmm_options *opt);
/* Make every vCPU leave its loop; reset: reboot the guest afterwards. */
void vm_stop(struct vm *vm, int reset);
/* Kick every vCPU out of KVM_RUN so it looks at its queue and vm->stop. */
void vm_kick_all(struct vm *vm);
/*
 * Pause: every vCPU thread that runs leaves KVM_RUN and waits in
 * vm_pause_point() until vm_resume(). Returns 0 once they all wait, or -1
 * (the pause undone) if one did not within timeout_ns: the caller says so.
 */
int vm_pause(struct vm *vm, uint64_t timeout_ns);
void vm_resume(struct vm *vm);
/* On a vCPU thread, before KVM_RUN: wait here while the VM is paused. */
void vm_pause_point(struct vcpu *v);

#endif
