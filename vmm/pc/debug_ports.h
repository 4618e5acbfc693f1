/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The PC's debug port 0x80: POST codes, and the port Linux's io_delay()
 * writes to wait. Taken and dropped without an absent report: a guest
 * writes it by design, not by probing.
 */
#ifndef HWLAB_DEBUG_PORTS_H
#define HWLAB_DEBUG_PORTS_H

struct vm;

/* On the VM's device bus; 0, or -1 after a message. */
int debug_ports_register(struct vm *vm);

#endif
