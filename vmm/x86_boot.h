/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the bare-metal guest finds at boot (include/hwlab_abi.h): page
 * tables, GDT, boot info and its ELF in guest RAM, and each vCPU already in
 * 64-bit mode at the entry point.
 */
#ifndef HWLAB_X86_BOOT_H
#define HWLAB_X86_BOOT_H

struct vm;
struct vcpu;

/* Write the boot structures and load the ELF image; 0, or -1 after a message. */
int x86_boot_load_guest(struct vm *vm);
/* Registers for the entry: long mode, rdi = vCPU id, rsi = boot info. */
int x86_boot_reset_vcpu(struct vcpu *v);

#endif
