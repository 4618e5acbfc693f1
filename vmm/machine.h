/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The machine as a whole: the VM and what each layer adds to it, in the
 * order KVM needs, up to its first KVM_RUN; and its reboot.
 */
#ifndef HWLAB_MACHINE_H
#define HWLAB_MACHINE_H

struct vm;
struct vmm_options;

/*
 * The guest's files, the VM, its devices, RAM and vCPUs, the SIGBUS
 * handler (*ao_fd: its AO wakeup) and the published memslot table (whose
 * wait for a lock ends on stopped()). 0, or -1 after a message.
 */
int machine_setup(struct vm *vm, const struct vmm_options *opt, int *ao_fd,
		  int (*stopped)(void));
/* Reboot the guest on fresh memory for the poisoned pages; 0, or -1 after a message. */
int machine_reset(struct vm *vm);

#endif
