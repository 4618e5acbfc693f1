/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Port I/O and MMIO of a Linux guest: the COM1 UART, enough of the CMOS RTC
 * for the kernel's clock, the keyboard controller's reset line (how Linux
 * reboots without ACPI; no controller otherwise), and everything else answered as an absent device
 * would answer (reads all ones, writes dropped) and reported once per port,
 * never fatal: a guest probing for hardware it does not find is normal.
 */
#ifndef HWLAB_PC_IO_H
#define HWLAB_PC_IO_H

#include <stdint.h>

struct vcpu;
struct vm;

#define PC_IO_MAX_REPORTED	32	/* distinct ports/pages reported */

struct pc_io_seen {
	unsigned int nr_ports, nr_mmio;
	uint16_t ports[PC_IO_MAX_REPORTED];
	uint64_t mmio_pages[PC_IO_MAX_REPORTED];
	unsigned long ignored;		/* accesses to absent devices, in all */
	/*
	 * Every port exit by its port (the access's first port), present
	 * device or not: each one is a trip out of KVM_RUN, and a guest that
	 * polls a port in a loop is a slow boot (vmm_exit's io_exits line).
	 */
	unsigned long port_exits;
	uint32_t exits_by_port[65536];
};

#define PC_IO_BUSIEST		8	/* ports io_exits names */

/*
 * No PCI: the guest finds no configuration mechanism on 0xcf8/0xcfc (reads
 * all ones), so Linux goes without PCI as with pci=off, which Firecracker
 * passes and we may not. Not a host bridge: we have no PCI device to show,
 * and a bridge would not shorten the one costly PCI access a stock kernel
 * makes: on an AMD family 0xf vCPU (the outer VM's QEMU TCG CPU), its
 * early AGP aperture search (arch/x86/kernel/aperture_64.c, run twice)
 * reads the class of function 0 of all 32 slots of all 256 buses through
 * conf1 before it knows whether conf1 exists: 16,384 config reads, one
 * address write and one data read each, whatever answers them.
 *
 * pc_io_setup() has KVM drop the address writes itself (an ioeventfd
 * nobody reads), so that only the reads leave the kernel. Returns 0, or
 * -1 after a message.
 */
int pc_io_setup(struct vm *vm);
/* A KVM_EXIT_IO of a Linux guest. Returns 0 to run on, -1 when the guest asked for a reset. */
int pc_io_port(struct vcpu *v);
/* A KVM_EXIT_MMIO of a Linux guest (no device is there). */
void pc_io_mmio(struct vcpu *v);
/*
 * The n (at most PC_IO_BUSIEST) ports with the most exits, most first
 * (ties: the lower port first), into ports[]; returns n. Pure.
 */
unsigned int pc_io_busiest(const struct pc_io_seen *seen, uint16_t *ports, unsigned int n);
/* The "io_exits" report: all port exits, and the busiest ports' counts. */
void pc_io_report_exits(const struct pc_io_seen *seen);

#endif
