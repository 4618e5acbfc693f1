/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Booting a Linux bzImage with the x86 64-bit boot protocol, as kvmtool and
 * firecracker do: the protected-mode kernel at 1 MiB, the zero page
 * (struct boot_params) with an e820 map made from the memslots, the command
 * line, the initrd at the top of RAM, an MP table for the other CPUs, and
 * the boot CPU entering the kernel's 64-bit entry with paging on. No
 * firmware, no real-mode setup code.
 */
#ifndef HWLAB_LINUX_BOOT_H
#define HWLAB_LINUX_BOOT_H

#include <stddef.h>
#include <stdint.h>

struct vm;
struct vcpu;

/* Guest-physical layout (the page tables and GDT are x86_boot.c's). */
#define LINUX_BOOT_PARAMS_GPA	0x10000ULL
#define LINUX_CMDLINE_GPA	0x20000ULL
#define LINUX_CMDLINE_MAX	4096
#define LINUX_MPTABLE_GPA	0x9fc00ULL	/* the top KiB of base memory */
#define LINUX_LOW_RAM_END	0x9fc00ULL
#define LINUX_KERNEL_GPA	0x100000ULL
/* where a non-relocatable x86-64 kernel decompresses itself (CONFIG_PHYSICAL_START) */
#define LINUX_PHYSICAL_START	0x1000000ULL
#define LINUX_SEL_CODE		0x10	/* __BOOT_CS */
#define LINUX_SEL_DATA		0x18	/* __BOOT_DS */
#define LINUX_SEL_TSS		0x20
#define LINUX_GDT_ENTRIES	5

struct e820_range {
	uint64_t addr, size;
	uint32_t type;			/* 1 RAM, 2 reserved */
};

/*
 * The e820 map for RAM [0, mem_size) in slots that follow each other: RAM
 * below LINUX_LOW_RAM_END, the MP table and BIOS area reserved, RAM from
 * 1 MiB. Pure; returns the entries written (at most max).
 */
unsigned int linux_boot_e820(uint64_t mem_size, struct e820_range *out, unsigned int max);

/*
 * The longest --append the kernel takes, without its NUL: the setup
 * header's cmdline_size (0: the kernel gives none) within ours. Pure.
 */
unsigned int linux_boot_cmdline_max(uint32_t cmdline_size);
/*
 * Where an initrd of size bytes goes: as high as RAM and the kernel's
 * initrd_addr_max (0: none) allow, page-aligned, not below lowest (the end
 * of what the kernel claims). Returns 0 with *gpa, or -1 with why in err,
 * naming the limit that is short. Pure.
 */
int linux_boot_place_initrd(uint64_t mem_size, uint32_t initrd_addr_max, uint64_t lowest,
			    uint64_t size, uint64_t *gpa, char *err, size_t errlen);

/* Load kernel, initrd, zero page, command line, MP table; 0, or -1 after a message. */
int linux_boot_load(struct vm *vm);
/* vCPU 0 at the 64-bit entry; the others wait for INIT/SIPI in the local APIC. */
int linux_boot_reset_vcpu(struct vcpu *v);
/* [gpa, gpa + len) ranges the VMM writes at boot (for a reset's fresh memory). */
unsigned int linux_boot_areas(const struct vm *vm, uint64_t *gpa, uint64_t *len, unsigned int max);

#endif
