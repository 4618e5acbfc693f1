/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Linux guest's console: the COM1 UART on the device bus, its output
 * queued for --console (or stderr) by a writer thread, its input read from
 * --console-in by a thread of its own. One console per process.
 */
#ifndef HWLAB_CONSOLE_H
#define HWLAB_CONSOLE_H

#include <stdint.h>

struct vm;

/*
 * Before the VM exists, so that a bad path fails early: open the output
 * (out_path, or stderr when NULL) and the input (in_path, or none), start
 * the output's writer. stamp: each line gets its CLOCK_MONOTONIC time.
 * 0, or -1 after a message.
 */
int console_open(struct vm *vm, const char *out_path, const char *in_path, int stamp);
/* The UART on the VM's device bus (its interrupt goes to KVM's irqchip). */
int console_register(struct vm *vm);
/* After the VM exists: the input thread, if there is an input. 0, or -1. */
int console_start_input(struct vm *vm);
/* At exit: the UART's partial last line out. */
void console_flush(void);
/* What the writer still holds gets until deadline (CLOCK_MONOTONIC ns). */
void console_drain(uint64_t deadline);
/* Lines dropped because the console was not read fast enough. */
unsigned long console_dropped(void);

#endif
