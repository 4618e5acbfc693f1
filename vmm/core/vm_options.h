/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a run is asked to do: the VM's configuration, which every layer reads
 * through vm->opt. Here in core/ so that struct vm can point at it without
 * an upward include; the command line that fills it is options.c's.
 */
#ifndef HWLAB_VM_OPTIONS_H
#define HWLAB_VM_OPTIONS_H

#include <stdint.h>

#include "core/memslot.h"

#define MAX_POISON_HOOKS 64

enum vmm_action {
	VMM_RUN,		/* run the guest image */
	VMM_CHECK,		/* --check: probe /dev/kvm and exit */
	VMM_HELP,		/* --help */
};

struct vmm_options {
	enum vmm_action action;
	const char *image_path;		/* the bare-metal guest's ELF, or NULL */
	const char *kernel_path;	/* --kernel: a Linux bzImage, or NULL */
	const char *initrd_path;
	const char *append;		/* the Linux command line */
	const char *console_path;	/* the UART's output; NULL: stdout */
	int console_stamp;		/* t_ns= before every console line */
	const char *console_in;		/* the UART's input: a file, a FIFO, or "-" (stdin) */
	int mce_vendor;			/* -1 auto (the CPUID's), or enum cpu_vendor */
	int smca;			/* -1 auto, 0 off, 1 on (mce/smca.h) */
	int mce_banks;			/* 0 auto (mce_choose_banks()), else 10..32 */
	uint64_t mem_size;		/* bytes */
	unsigned int nr_slots;
	int backing;			/* enum memslot_backing */
	unsigned int nr_vcpus;
	unsigned int passes;
	int guest_no_mce;		/* test: guest leaves CR4.MCE clear */
	int guest_keep_mcip;		/* test: guest never clears MCG_STATUS.MCIP */
	int guest_retry_ar;		/* test: guest returns into the poisoned access */
	int guest_fail_test;		/* test: guest reports a failure at once */
	int guest_repeat_pass;		/* test: guest sends every PASS ucall twice */
	int guest_ucall_at_retired;	/* test: guest points a ucall at a poisoned page */
	unsigned int guest_log_flood;	/* test: guest logs this many lines at once */
	int guest_read_unwritten;	/* test: guest reads a page nothing writes */
	int mce_page_lsb;		/* MCi_MISC LSB always 12; -1: for Linux guests */
	int mce_kill;			/* -1 sysctl policy, else PR_MCE_KILL_EARLY/LATE */
	int reset_on_unrecoverable;	/* else stop */
	unsigned int max_resets;
	const char *memmap_path;
	const char *snapshot_path;	/* --snapshot: where SIGUSR2 writes the state */
	const char *restore_path;	/* --restore: start from this state */
	const char *migrate_to;		/* --migrate-to unix:PATH: where SIGUSR2 sends the guest */
	const char *incoming;		/* --incoming unix:PATH: take the guest from there */
	unsigned int migrate_mib_s;	/* --migrate-bandwidth: MiB/s, 0 no limit */
	/* test hook: poison these GPAs when vCPU 0 reports this pass */
	uint64_t poison_gpas[MAX_POISON_HOOKS];
	unsigned int nr_poison;
	unsigned int poison_pass;
	int poison_corrupt_pfn;		/* debugfs corrupt-pfn, else MADV_HWPOISON */
	int poison_vmm_heap;		/* also poison a page of the VMM's own heap */
	int ksm;			/* --ksm: guest RAM madvise(MADV_MERGEABLE) */
	/* test: hold a reference to the guest page at pin_gpa (pin_hook.c) */
	uint64_t pin_gpa;
	int pin;
	const char *first_other;	/* the first option besides --check, which takes none */
};

#endif
