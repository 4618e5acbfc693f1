/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hwpoison-guest's parts (what the tool does and why: tools/hwpoison-guest.c),
 * one concern a file: proving the target process and its table
 * (hwpoison_guest_target.c), GPA -> HVA -> PFN of a page that is the VMM's
 * alone (hwpoison_guest_page.c), the write (hwpoison_guest_inject.c), the
 * soak (hwpoison_guest_soak.c, its report lines read by
 * hwpoison_guest_soak_line.c) and a libvirt domain's page
 * (hwpoison_guest_libvirt.c, in the libvirt build only). Each refusal dies
 * with its message: the tool poisons only what every check let through.
 */
#ifndef HWPOISON_GUEST_H
#define HWPOISON_GUEST_H

#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "hwpoison_guest_options.h"
#include "hwpoison_inject.h"
#include "memmap.h"

#define PAGE 4096ULL

/* One run of the tool: its command line and what its checks hold on to. */
struct hwpoison_guest {
	struct hwpoison_guest_options opt;
	const char *target_exe;		/* "hwlab-vmm", or a QEMU's for --qmp and --domain */
	unsigned long long vmm_start_time;	/* of the process the checks were made on */
	/* the table the checks were made on, kept open: its inode cannot be reused */
	const char *table_path;
	struct stat table_st;
};

/* hwpoison_guest_target.c: the process to poison and its memslot table */
uid_t target_owner_uid(pid_t pid);
void target_check_exe(const struct hwpoison_guest *g, pid_t pid);
void target_check_same_process(const struct hwpoison_guest *g, pid_t pid);
void target_check_table_held(const struct hwpoison_guest *g, pid_t pid);
void target_read_table(struct hwpoison_guest *g, const char *path, pid_t pid, uid_t vmm_uid,
		       struct memmap *m);
void target_read_qmp(const struct hwpoison_guest *g, pid_t pid, uint64_t gpa, struct memmap *m);
void target_qemu_page(const struct hwpoison_guest *g, pid_t pid, uint64_t page, uint64_t hva,
		      const char *source, struct memmap *m);

/* hwpoison_guest_page.c: a guest page's HVA and PFN, the VMM's alone */
uint64_t guest_page_hva(const struct memmap *m, uint64_t gpa, pid_t pid);
enum shared_ram guest_page_shared_ram(const struct memmap *m, uint64_t gpa);
void guest_page_check_file_unshared(pid_t pid, uint64_t hva, uint64_t gpa);
uint64_t guest_page_pfn(pid_t pid, uint64_t hva, uint64_t gpa, enum shared_ram shared,
			unsigned int wait_s);
void guest_page_recheck_pfn(pid_t pid, uint64_t hva, uint64_t gpa, enum shared_ram shared,
			    uint64_t pfn);

/* hwpoison_guest_inject.c: poison one page; its t_ns, just before the write */
uint64_t hwpoison_guest_poison(const struct hwpoison_guest *g, pid_t pid, const struct memmap *m,
			       uint64_t gpa);
/* hwpoison_guest_soak.c: --soak; 1 if an event was lost or duplicated */
int hwpoison_guest_soak(const struct hwpoison_guest *g, pid_t pid, const struct memmap *m,
			uint64_t first);
/* One VMM report line, as the soak takes it */
enum soak_line_kind {
	SOAK_LINE_OTHER,	/* none of the soak's: a malformed line too */
	SOAK_LINE_INJECT,	/* sigbus, action inject: the VMM injected it */
	SOAK_LINE_RETIRED,	/* guest_retired: the guest acknowledged it */
};

struct soak_line {
	int kind;		/* enum soak_line_kind */
	uint64_t gpa;		/* 0 when absent, as each number */
	uint64_t t_ns;		/* the line's */
	uint64_t signal_t_ns;	/* inject: the SIGBUS handler's */
	uint64_t queued_t_ns;	/* inject, AO: the monitor queued it for a vCPU */
	int ar;			/* inject: si_code BUS_MCEERR_AR */
};

/* hwpoison_guest_soak_line.c: line's members the soak uses into s; its kind. Pure. */
int hwpoison_guest_soak_line(const char *line, struct soak_line *s);

/* hwpoison_guest_libvirt.c: --domain or --watch; an exit status */
int hwpoison_guest_libvirt(struct hwpoison_guest *g);

#endif
