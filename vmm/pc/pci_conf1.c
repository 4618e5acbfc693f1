// SPDX-License-Identifier: GPL-2.0
#include "pc/pci_conf1.h"

#include <stdlib.h>
#include <string.h>

#include "core/device.h"
#include "core/vm.h"
#include "log.h"

#define PORT_PCI_CONF1_ADDR	0xcf8	/* conf1's address register, 32 bits */
#define PORT_PCI_CONF1_DATA	0xcfc	/* its data window, 0xcfc..0xcff */
#define PCI_CONF1_ENABLE	0x80000000u

struct pci_conf1 {
	struct device dev;
	uint32_t addr;		/* the address latch */
};

/*
 * 00:00.0's configuration space (pci_conf1.h says why it is there): a host
 * bridge (class 06/00, one function, no BARs) whose capability list
 * (status bit 4, pointer at 0x34) is one AGP capability (ID 2, AGP 3.0,
 * no next) at 0x40 with status, command and APSIZE (cap + 0x14) all 0: an
 * aperture at bus address 0, which Linux's read_agp() finds invalid and
 * ignores. Little-endian, as the guest reads it; the rest reads 0.
 */
#define HOST_BRIDGE_AGP_CAP	0x40
static const uint8_t host_bridge[0x58] = {
	[0x00] = 0x36, [0x01] = 0x1b,	/* vendor 0x1b36 (Red Hat: QEMU's devices) */
	[0x02] = 0x08, [0x03] = 0x00,	/* device 0x0008, "QEMU PCIe host bridge" */
	[0x06] = 0x10,			/* status: a capability list */
	[0x0b] = 0x06,			/* class 06 (bridge), subclass 00 (host) */
	[0x34] = HOST_BRIDGE_AGP_CAP,
	[HOST_BRIDGE_AGP_CAP] = 0x02,	/* PCI_CAP_ID_AGP, next 0 */
	[HOST_BRIDGE_AGP_CAP + 2] = 0x30,	/* AGP 3.0 */
};

int pci_conf1_byte(uint32_t addr, unsigned int offset, uint8_t *b)
{
	unsigned int bus = (addr >> 16) & 0xff, devfn = (addr >> 8) & 0xff;
	unsigned int reg = (addr & 0xfc) + (offset & 3);

	if (!(addr & PCI_CONF1_ENABLE) || bus || devfn)
		return 0;
	*b = reg < sizeof(host_bridge) ? host_bridge[reg] : 0;
	return 1;
}

static int conf1_io(struct vcpu *v, void *opaque, uint64_t port, int is_write, uint8_t *data,
		    unsigned int len)
{
	struct pci_conf1 *c = opaque;
	unsigned int i;

	(void)v;
	/*
	 * The address latch: a 32-bit write to 0xcf8 only (narrower ones
	 * are other devices' ports on a PC: pci_check_type2() writes bytes
	 * there). Its reads stay absent, all ones: pci_conf1.h says why.
	 */
	if (port < PORT_PCI_CONF1_DATA) {
		if (!is_write || len != 4)
			return DEVICE_ABSENT;
		memcpy(&c->addr, data, 4);
		return 0;
	}
	/* no other function, and no writes: all ones, as for no device */
	if (is_write)
		return DEVICE_ABSENT;
	for (i = 0; i < len; i++)
		if (!pci_conf1_byte(c->addr, port - PORT_PCI_CONF1_DATA + i, &data[i]))
			return DEVICE_ABSENT;
	return 0;
}

static int conf1_save(void *opaque, struct device_stream *out)
{
	device_stream_put(out, &((struct pci_conf1 *)opaque)->addr, 4);
	return 0;
}

static int conf1_restore(void *opaque, struct device_stream *in)
{
	device_stream_get(in, &((struct pci_conf1 *)opaque)->addr, 4);
	return 0;
}

int pci_conf1_register(struct vm *vm)
{
	struct pci_conf1 *c = calloc(1, sizeof(*c));

	if (!c) {
		pr_err("out of memory for PCI conf1");
		return -1;
	}
	/* no reset hook: a reboot has always kept the latch (the kernel writes it first) */
	c->dev = (struct device) {
		.name = "pci-conf1", .opaque = c, .io = conf1_io,
		.save = conf1_save, .restore = conf1_restore,
	};
	return device_register(&vm->devices, &c->dev, DEVICE_PIO, PORT_PCI_CONF1_ADDR, 4) ||
	       device_register(&vm->devices, &c->dev, DEVICE_PIO, PORT_PCI_CONF1_DATA, 4) ? -1 : 0;
}
