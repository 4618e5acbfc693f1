/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Booting a guest of either kind: the bare-metal ELF (x86_boot.c) or a
 * Linux bzImage (linux_boot.c), picked by the VM's kind here, so that
 * neither loader calls the other and x86_boot.c's long-mode primitives
 * stay below linux_boot.c.
 */
#ifndef HWLAB_GUEST_BOOT_H
#define HWLAB_GUEST_BOOT_H

#include <stdint.h>

struct vm;
struct vcpu;

/* Write the boot structures and load the guest; 0, or -1 after a message. */
int guest_boot_load(struct vm *vm);
/* The vCPU's registers for the guest's entry (a Linux guest's APs wait for SIPI). */
int guest_boot_reset_vcpu(struct vcpu *v);
/* Up to max areas the VMM writes at boot (for guest_ram_refresh_boot_area()). */
unsigned int guest_boot_areas(const struct vm *vm, uint64_t *gpa, uint64_t *len, unsigned int max);

#endif
