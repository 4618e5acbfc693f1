/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Port I/O and MMIO of a Linux guest: the COM1 UART, enough of the CMOS RTC
 * for the kernel's clock, the keyboard controller's reset line (how Linux
 * reboots without ACPI), and everything else answered as an absent device
 * would answer (reads all ones, writes dropped) and reported once per port,
 * never fatal: a guest probing for hardware it does not find is normal.
 */
#ifndef HWLAB_PC_IO_H
#define HWLAB_PC_IO_H

#include <stdint.h>

struct vcpu;

#define PC_IO_MAX_REPORTED	32	/* distinct ports/pages reported */

struct pc_io_seen {
	unsigned int nr_ports, nr_mmio;
	uint16_t ports[PC_IO_MAX_REPORTED];
	uint64_t mmio_pages[PC_IO_MAX_REPORTED];
	unsigned long ignored;		/* accesses to absent devices, in all */
};

/* A KVM_EXIT_IO of a Linux guest. Returns 0 to run on, -1 when the guest asked for a reset. */
int pc_io_port(struct vcpu *v);
/* A KVM_EXIT_MMIO of a Linux guest (no device is there). */
void pc_io_mmio(struct vcpu *v);

#endif
