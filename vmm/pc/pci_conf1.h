/* SPDX-License-Identifier: GPL-2.0 */
/* PCI configuration mechanism 1 (ports 0xcf8 and 0xcfc-0xcff): absent, but for one answer. */
#ifndef HWLAB_PCI_CONF1_H
#define HWLAB_PCI_CONF1_H

#include <stdint.h>

struct vm;

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
 * AGP capability and no aperture (pci_conf1.c), and the search stops at its
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
int pci_conf1_byte(uint32_t addr, unsigned int offset, uint8_t *b);
/* On the VM's device bus; 0, or -1 after a message. */
int pci_conf1_register(struct vm *vm);

#endif
