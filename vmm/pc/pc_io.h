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
 * No PCI, but one answer on conf1 for Linux's early raw probes. On an AMD
 * family 0xf vCPU (the outer VM's QEMU TCG CPU), a stock kernel's early
 * AGP aperture search (arch/x86/kernel/aperture_64.c, search_agp_bridge(),
 * run twice: early_gart_iommu_check() and gart_iommu_hole_init()) reads the
 * class of function 0 of every slot of every bus through conf1, without
 * asking whether conf1 exists, until it finds a host bridge with an AGP
 * capability: with nothing there, 8,192 probes a search, each an address
 * write to 0xcf8 and a data read from 0xcfc, both KVM exits. Measured in a
 * stock 6.1 guest's own log (hwlab-vmm, THP): 2.1 s of the 5.6 s from its
 * first message to its /init, between "AGP: Checking aperture..." and "No
 * AGP bridge found", twice.
 *
 * So conf1's data port shows one function, 00:00.0: a host bridge with an
 * AGP capability and no aperture (pc_io.c), and the search stops at its
 * first probe ("AGP bridge", an aperture at bus address 0 that read_agp()
 * ignores, no GART). The address register does not read back (all ones),
 * so pci_check_type1() finds no conf1, pci_check_type2() none either, and
 * the kernel goes without PCI ("No config space access function found"),
 * as with pci=off, which Firecracker passes and we may not: only the early
 * code that trusts conf1 blindly sees the bridge.
 */
/*
 * Byte OFFSET (0..3) of the conf1 data window for the address register
 * ADDR: 1 with *b set for 00:00.0 (enable bit set), else 0 (no device:
 * the caller answers all ones). Pure.
 */
int pc_io_conf1_byte(uint32_t addr, unsigned int offset, uint8_t *b);
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
