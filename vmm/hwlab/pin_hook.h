/* SPDX-License-Identifier: GPL-2.0 */
/* Test option --pin-gpa: a reference to one guest page, held as a device would. */
#ifndef HWLAB_PIN_HOOK_H
#define HWLAB_PIN_HOOK_H

struct vm;

/* Before the guest runs, if --pin-gpa was given; 0, or -1 (reported). */
int pin_hook_setup(struct vm *vm);

#endif
