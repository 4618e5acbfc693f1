/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The guest's kind, one ops table each: the bare-metal ELF (x86_boot.c,
 * ucalls: hwlab/) or a Linux bzImage (linux_boot.c, PC devices: pc/).
 * Picked once, before the VM is made (guest_kind_pick()), and called
 * through everywhere else: nothing outside this file asks which kind a
 * guest is. Neither loader calls the other, and x86_boot.c's long-mode
 * primitives stay below linux_boot.c.
 */
#ifndef HWLAB_GUEST_BOOT_H
#define HWLAB_GUEST_BOOT_H

#include <stdint.h>

#include "boot/guest_image.h"

struct vm;
struct vcpu;
struct vmm_options;

/* The kind's own state: its files, and where linux_boot.c put them. */
struct guest_state {
	struct guest_image image;	/* the ELF, or the bzImage */
	struct guest_image initrd;	/* Linux guests; data NULL if none */
	uint64_t kernel_end, initrd_gpa;
};

/* What a kind's handle_exit says besides 0 (run on), 1 (finished) and -1 (failed, reported). */
#define GUEST_EXIT_REBOOT	(-2)	/* the guest reboots; *why says how */
#define GUEST_EXIT_COMMON	(-3)	/* not the kind's: vcpu.c's handling of every kind */

struct guest_kind {
	const char *name;		/* vmm_start's "guest" */
	/* for mce/, copied into struct vm: machine checks encoded as the vCPUs' vendor (else Intel's) */
	int mce_as_vcpu_vendor;
	/* for mce/: a page-granular MCE tells the rest of its lost extent too (mce_spread) */
	int mce_spread;
	/* Before the VM exists, after the image is read: other files; NULL: none. */
	int (*open)(struct vm *vm, const struct vmm_options *opt);
	/* After vm_create(), before guest RAM and vCPUs: its devices. NULL: none. */
	int (*create)(struct vm *vm);
	/* Write the boot structures and load the guest (first boot and every reset). */
	int (*load)(struct vm *vm);
	/* After KVM_CREATE_VCPU, before its first reset; NULL: nothing. */
	int (*create_vcpu)(struct vcpu *v);
	/* Every vCPU made, before the first KVM_RUN; NULL: nothing. */
	int (*ready)(struct vm *vm);
	/* The vCPU's registers for the guest's entry (a Linux guest's APs wait for SIPI). */
	int (*reset_vcpu)(struct vcpu *v);
	/* Up to max areas the VMM writes at boot (for guest_ram_refresh_boot_area()). */
	unsigned int (*boot_areas)(const struct vm *vm, uint64_t *gpa, uint64_t *len,
				   unsigned int max);
	/* A KVM exit: 0, 1, -1, GUEST_EXIT_REBOOT or GUEST_EXIT_COMMON. */
	int (*handle_exit)(struct vcpu *v, const char **why);
	/* The run is over, before vmm_exit: what the kind has to say. NULL: nothing. */
	void (*finish)(struct vm *vm);
};

/*
 * The kind for opt (a --kernel: Linux), into vm->kind and vm->guest, with
 * its MCE choices; reads the image and the kind's other files. Before
 * vm_create(). 0, or -1 after a message.
 */
int guest_kind_open(struct vm *vm, const struct vmm_options *opt);
/* The kind's ops where they may be NULL: nothing to do then. 0, or -1 after a message. */
int guest_kind_create(struct vm *vm);
int guest_kind_create_vcpu(struct vcpu *v);
int guest_kind_ready(struct vm *vm);
void guest_kind_finish(struct vm *vm);
int guest_kind_handle_exit(struct vcpu *v, const char **why);
/* Write the boot structures and load the guest; 0, or -1 after a message. */
int guest_boot_load(struct vm *vm);
/* The vCPU's registers for the guest's entry (a Linux guest's APs wait for SIPI). */
int guest_boot_reset_vcpu(struct vcpu *v);
/* Up to max areas the VMM writes at boot (for guest_ram_refresh_boot_area()). */
unsigned int guest_boot_areas(const struct vm *vm, uint64_t *gpa, uint64_t *len, unsigned int max);

#endif
