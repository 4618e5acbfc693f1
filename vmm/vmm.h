/* SPDX-License-Identifier: GPL-2.0 */
/* The VM, its vCPUs and the options that shape them. */
#ifndef HWLAB_VMM_H
#define HWLAB_VMM_H

#include <pthread.h>
#include <stdint.h>
#include <linux/kvm.h>

#include "hwlab_abi.h"
#include "mce.h"
#include "memslot.h"
#include "poison_list.h"
#include "sigbus.h"

#define MAX_POISON_HOOKS 16

struct vmm_options {
	const char *image_path;
	uint64_t mem_size;
	unsigned int nr_slots;
	enum memslot_backing backing;
	unsigned int nr_vcpus;
	unsigned int passes;
	int guest_no_mce;
	int guest_keep_mcip;
	int mce_page_lsb;
	int guest_retry_ar;		/* test: guest returns into the poisoned access */		/* MCi_MISC LSB always 12, for Linux guests */		/* test: guest never clears MCG_STATUS.MCIP */
	int mce_kill;			/* -1 sysctl policy, else PR_MCE_KILL_EARLY/LATE */
	int reset_on_unrecoverable;	/* else stop */
	unsigned int max_resets;
	const char *memmap_path;
	/* test hook: poison these GPAs when vCPU 0 reports this pass */
	uint64_t poison_gpas[MAX_POISON_HOOKS];
	unsigned int nr_poison;
	unsigned int poison_pass;
	int poison_corrupt_pfn;		/* debugfs corrupt-pfn, else MADV_HWPOISON */
	int poison_vmm_heap;		/* also poison a page of the VMM's own heap */
};

enum vcpu_state {
	VCPU_RUNNING,
	VCPU_DONE,		/* guest reported done with intact checksums */
	VCPU_FAILED,		/* guest or VMM error; reported */
	VCPU_STOPPED,		/* asked to stop (another vCPU failed or reset) */
};

struct pending_mce {
	struct kvm_x86_mce mce;
	struct sigbus_event ev;
	struct gpa_extent ext;
};

#define MCE_QUEUE_LEN 32

struct vm;

struct vcpu {
	struct vm *vm;
	unsigned int id;
	int fd;
	struct kvm_run *run;
	pthread_t thread;
	struct sigbus_thread sig;
	enum vcpu_state state;
	uint64_t last_injected_gpa;
	uintptr_t last_ar_addr;		/* livelock guard: same si_addr again and again */
	unsigned int ar_repeats;

	pthread_mutex_t lock;		/* guards queue */
	pthread_cond_t queued;
	struct pending_mce queue[MCE_QUEUE_LEN];
	unsigned int queue_len;
};

struct vm {
	const struct vmm_options *opt;
	int kvm_fd;
	int vm_fd;
	long run_size;
	struct memslot_table mem;
	struct poison_list poison;	/* every page the kernel reported */
	struct poison_list notified;	/* pages the guest got a machine check for */
	pthread_mutex_t poison_lock;	/* guards both lists */
	struct kvm_cpuid2 *cpuid;
	uint64_t entry;
	uint8_t *image;
	unsigned long image_size;
	unsigned int boot_count;
	struct vcpu vcpus[GUEST_MAX_VCPUS];
	volatile int stop;		/* all vCPUs leave their loops */
	volatile int reset_requested;
	unsigned long injected;
};

/* vm.c */
int kvm_open_checked(char *err, unsigned long errlen);
int vm_create(struct vm *vm, const struct vmm_options *opt);
int vm_load_guest(struct vm *vm);
int vm_remap_poisoned(struct vm *vm);
int vm_write_memmap(const struct vm *vm, const char *path);
void vm_kick_all(struct vm *vm);

/* vcpu.c */
int vcpu_create(struct vm *vm, unsigned int id);
int vcpu_reset(struct vcpu *v);
void *vcpu_thread(void *arg);
/* Queue an injection for v and kick it out of KVM_RUN. */
int vcpu_queue_mce(struct vcpu *v, const struct pending_mce *p);

/* mce_event.c */
/*
 * Translate a recorded SIGBUS into the machine check for it and add its
 * extent to the poisoned-page list. Returns -1 if the address is outside
 * guest RAM, else how many pages were newly poisoned.
 */
int mce_event_prepare(struct vm *vm, const struct sigbus_event *ev, struct pending_mce *p);
/* One report line for the event; v is NULL when no vCPU is involved. */
void mce_event_report(const struct vcpu *v, const struct pending_mce *p, const char *action,
		      const char *reason);

/* poison_hook.c */
int poison_hook_run(struct vcpu *v);

#endif
