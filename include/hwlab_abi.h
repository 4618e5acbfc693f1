/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The contract between the VMM (vmm/) and the bare-metal guest (guest/):
 * guest-physical memory layout, the boot-info block and the ucall protocol.
 * Both sides include this file; keep it free of libc.
 */
#ifndef HWLAB_ABI_H
#define HWLAB_ABI_H

#include <stdint.h>

/* Guest-physical layout. The VMM writes the first 1 MiB; the guest's ELF is
 * linked at GUEST_LOAD_GPA; the working set starts at GUEST_WORKSET_GPA. */
#define GUEST_PML4_GPA		0x1000ULL
#define GUEST_PDPT_GPA		0x2000ULL
#define GUEST_PD_GPA		0x3000ULL	/* 4 page directories: 4 GiB */
#define GUEST_GDT_GPA		0x7000ULL
#define GUEST_BOOT_INFO_GPA	0x8000ULL
#define GUEST_LOAD_GPA		0x100000ULL
#define GUEST_WORKSET_GPA	0x400000ULL
/* The page below the working set: nothing writes it (HWLAB_BOOT_READ_UNWRITTEN). */
#define GUEST_UNWRITTEN_GPA	0x3ff000ULL
#define GUEST_MAX_VCPUS		8
#define GUEST_PAGE_SIZE		4096ULL

#define GUEST_SEL_CODE		0x08
#define GUEST_SEL_DATA		0x10

#define HWLAB_BOOT_MAGIC	0x4857504f49534f4eULL	/* "HWPOISON" */
#define HWLAB_BOOT_NO_MCE	(1u << 0)	/* leave CR4.MCE clear */
#define HWLAB_BOOT_KEEP_MCIP	(1u << 1)	/* a buggy #MC handler: never clears MCIP */
#define HWLAB_BOOT_RETRY_AR	(1u << 2)	/* a buggy #MC handler: re-runs the access */
#define HWLAB_BOOT_FAIL_TEST	(1u << 3)	/* test: fail at once, as a failed check would */
#define HWLAB_BOOT_REPEAT_PASS	(1u << 5)	/* a lying guest: every PASS ucall twice */
#define HWLAB_BOOT_UCALL_AT_RETIRED (1u << 6)	/* a hostile guest: a ucall at a poisoned page */
/* test: read GUEST_UNWRITTEN_GPA, never write it: the host maps the zero page there */
#define HWLAB_BOOT_READ_UNWRITTEN	(1u << 4)

struct hwlab_boot_info {
	uint64_t magic;
	uint64_t ram_size;
	uint64_t workset_gpa;
	uint64_t workset_size;
	uint32_t nr_vcpus;
	uint32_t passes;	/* 0: run until the VMM stops the guest */
	uint32_t flags;
	uint32_t boot_count;	/* 1 on first boot, +1 on every VMM reset */
	uint32_t log_flood;	/* test: UCALL_LOG this many times in a row first */
	uint32_t reserved;
};

/*
 * ucall: the guest writes the GPA of a struct hwlab_ucall to UCALL_PORT with
 * a 32-bit OUT; the VMM reads the struct from guest memory while the vCPU is
 * stopped at the exit, so the struct may live on the guest's stack.
 */
#define UCALL_PORT		0x4b4d

enum hwlab_ucall_cmd {
	UCALL_LOG = 1,		/* msg */
	UCALL_RETIRED,		/* args: gpa, pages, mci_status, mcg_status; arg4: bank */
	UCALL_PASS,		/* args: pass, pages_checked, pages_retired, errors */
	UCALL_DONE,		/* args: passes, pages_checked, pages_retired, errors */
	UCALL_FAIL,		/* msg "file:line: why"; args: vector, rip, mcg_status,
				 * mci_status */
	UCALL_MC_BROADCAST,	/* another vCPU's machine check reached this one:
				 * args: mci_status, mcg_status, bank */
};

#define UCALL_MSG_LEN		96

struct hwlab_ucall {
	uint64_t cmd;
	uint64_t args[5];
	char msg[UCALL_MSG_LEN];
};

#endif
