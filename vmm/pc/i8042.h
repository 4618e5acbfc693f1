/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The keyboard controller's reset line (ports 0x60 and 0x64): how Linux
 * reboots without ACPI. No controller otherwise: Linux's i8042 probe finds
 * none in a few port exits (i8042.c says how).
 */
#ifndef HWLAB_I8042_H
#define HWLAB_I8042_H

struct vm;

/* On the VM's device bus; 0, or -1 after a message. */
int i8042_register(struct vm *vm);

#endif
