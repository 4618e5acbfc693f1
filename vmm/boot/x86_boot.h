/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How a guest starts: page tables, GDT and each vCPU already in 64-bit mode
 * at the entry point. For the bare-metal guest (include/hwlab_abi.h) also
 * its boot info and its ELF; a Linux guest's boot is linux_boot.c's, which
 * shares the page tables and the long-mode entry from here (and this file
 * knows nothing of it: guest_boot.c picks one by the guest's kind).
 */
#ifndef HWLAB_X86_BOOT_H
#define HWLAB_X86_BOOT_H

#include <stdint.h>

struct vm;
struct vcpu;

/* GDT descriptors: flat 64-bit code, flat data, a busy 64-bit TSS at base 0 */
#define X86_GDT_CODE64		0x00af9b000000ffffULL
#define X86_GDT_DATA		0x00cf93000000ffffULL
#define X86_GDT_TSS_BUSY	0x00008b0000000067ULL

struct x86_long_mode_entry {
	uint16_t code_sel, data_sel, tss_sel;
	unsigned int gdt_entries;	/* the GDT is at GUEST_GDT_GPA */
	uint64_t rip, rdi, rsi;
	uint64_t apic_base;		/* IA32_APIC_BASE; 0: leave KVM's */
};

/* The bare-metal guest: its boot structures and its ELF; 0, or -1 after a message. */
int x86_boot_load_elf_guest(struct vm *vm);
/* The bare-metal guest's vCPU at its entry, in long mode. */
int x86_boot_reset_elf_vcpu(struct vcpu *v);
/* What the VMM writes for the bare-metal guest: everything below GUEST_WORKSET_GPA. */
unsigned int x86_boot_elf_areas(const struct vm *vm, uint64_t *gpa, uint64_t *len, unsigned int max);

/* Identity map of the low 4 GiB in 2 MiB pages at GUEST_PML4_GPA. */
int x86_boot_write_page_tables(struct vm *vm);
/* Long mode, paging on, flat segments, interrupts off, at e->rip. */
int x86_boot_enter_long_mode(struct vcpu *v, const struct x86_long_mode_entry *e);

#endif
