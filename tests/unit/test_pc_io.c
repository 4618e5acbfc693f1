// SPDX-License-Identifier: GPL-2.0
/* A Linux guest's port I/O: the exits it costs, and which ports io_exits names. */
#include <string.h>

#include "core/device.h"
#include "core/vm.h"
#include "pc/cmos_rtc.h"
#include "pc/debug_ports.h"
#include "pc/i8042.h"
#include "pc/pci_conf1.h"
#include "pc/uart_8250.h"
#include "unit.h"

UNIT_TEST(pc_io_busiest, "port exits: the busiest ports")
{
	static struct device_seen seen;
	uint16_t ports[DEVICE_BUSIEST];

	CHECK_EQ(device_busiest_ports(&seen, ports, DEVICE_BUSIEST), 0);
	seen.exits_by_port[0x64] = 10000;
	seen.exits_by_port[0xcf8] = 7;
	seen.exits_by_port[0x3f8] = 500;
	seen.exits_by_port[0x3fd] = 500;
	seen.exits_by_port[0xffff] = 1;
	CHECK_EQ(device_busiest_ports(&seen, ports, DEVICE_BUSIEST), 5);
	CHECK_EQ(ports[0], 0x64);
	CHECK_EQ(ports[1], 0x3f8);	/* ties: the lower port first */
	CHECK_EQ(ports[2], 0x3fd);
	CHECK_EQ(ports[3], 0xcf8);
	CHECK_EQ(ports[4], 0xffff);
	CHECK_EQ(device_busiest_ports(&seen, ports, 2), 2);
	CHECK_EQ(ports[0], 0x64);
	CHECK_EQ(ports[1], 0x3f8);
}

/* one byte-wide port access by a guest, as KVM_EXIT_IO hands it over */
static struct vm io_vm;
static union {
	struct kvm_run run;
	uint8_t bytes[4096];
} io_run;

static int io_failed;	/* device_port_exit() asked for a reset */

/* a Linux guest's board, as its kind registers it (without the irqchip and the console) */
static void io_board(void)
{
	static int registered;

	if (registered++)
		return;
	device_bus_init(&io_vm.devices);
	if (debug_ports_register(&io_vm) || i8042_register(&io_vm) || cmos_rtc_register(&io_vm) ||
	    pci_conf1_register(&io_vm))
		io_failed = 1;
}

static uint8_t inb(struct vcpu *v, uint16_t port)
{
	io_run.run.exit_reason = KVM_EXIT_IO;
	io_run.run.io.direction = KVM_EXIT_IO_IN;
	io_run.run.io.size = 1;
	io_run.run.io.port = port;
	io_run.run.io.count = 1;
	io_run.run.io.data_offset = 2048;
	io_run.bytes[2048] = 0x5a;
	io_failed |= device_port_exit(v) != 0;
	return io_run.bytes[2048];
}

#define I8042_STATUS	0x64
#define I8042_DATA	0x60
#define I8042_STR_OBF	0x01
#define I8042_STR_IBF	0x02

/*
 * Linux's i8042 probe (drivers/input/serio/i8042.c, 6.1 to 7.2), counted in
 * port exits: i8042_flush() reads while the output buffer is full, at most
 * 16 bytes, and a controller still full after them is "No controller
 * found"; one that flushes empty gets its CTR asked for, and
 * i8042_wait_read() polls 10,000 times for the answer. Returns the exits.
 */
static unsigned long linux_i8042_probe(struct vcpu *v, int *found)
{
	unsigned long before = io_vm.devices.seen.port_exits;
	int count = 0, i;

	*found = 1;
	while (inb(v, I8042_STATUS) & I8042_STR_OBF) {
		if (count++ >= 16) {
			*found = 0;
			return io_vm.devices.seen.port_exits - before;
		}
		inb(v, I8042_DATA);
	}
	for (i = 0; i < 10000 && !(inb(v, I8042_STATUS) & I8042_STR_OBF); i++)
		;
	return io_vm.devices.seen.port_exits - before;
}

/* a Linux guest finds no keyboard controller at once, yet can reset through it */
UNIT_TEST(pc_io_i8042, "no keyboard controller, found in a few port exits; its reset line")
{
	struct vcpu v = { .vm = &io_vm, .run = &io_run.run };
	int found;

	io_board();
	unsigned long exits = linux_i8042_probe(&v, &found);

	CHECK(!found, "Linux's i8042 probe: no controller");
	CHECK(exits <= 40, "the probe took %lu port exits (10,000 polls: a status of 0)", exits);
	/* reboot: kb_wait() waits for an empty input buffer, then 0xfe pulses reset */
	CHECK_EQ(inb(&v, I8042_STATUS) & I8042_STR_IBF, 0);
	CHECK(!io_failed, "a read asked for a reset");
}

/* a port access of SIZE bytes (1, 2, 4), as KVM_EXIT_IO hands it over */
static uint32_t pio(struct vcpu *v, int out, uint16_t port, unsigned int size, uint32_t val)
{
	io_run.run.exit_reason = KVM_EXIT_IO;
	io_run.run.io.direction = out ? KVM_EXIT_IO_OUT : KVM_EXIT_IO_IN;
	io_run.run.io.size = size;
	io_run.run.io.port = port;
	io_run.run.io.count = 1;
	io_run.run.io.data_offset = 2048;
	memcpy(&io_run.bytes[2048], &val, 4);
	io_failed |= device_port_exit(v) != 0;
	memcpy(&val, &io_run.bytes[2048], 4);
	return size == 4 ? val : val & ((1u << (size * 8)) - 1);
}

/* Linux's read_pci_config*() (arch/x86/pci/early.c): an address write, a data read */
static uint32_t early_read(struct vcpu *v, int bus, int slot, int func, int off, unsigned int size)
{
	pio(v, 1, 0xcf8, 4, 0x80000000u | bus << 16 | slot << 11 | func << 8 | off);
	return pio(v, 0, 0xcfc + (off & (4 - size)), size, 0x5a5a5a5a);
}

#define PCI_CLASS_BRIDGE_HOST	0x0600
#define PCI_CLASS_BRIDGE_OTHER	0x0680
#define PCI_CAP_ID_AGP		0x02

/* aperture_64.c's find_cap() */
static int find_cap(struct vcpu *v, int bus, int slot, int func, int cap)
{
	int bytes;
	uint8_t pos;

	if (!(early_read(v, bus, slot, func, 0x06, 2) & 0x10))
		return 0;
	pos = early_read(v, bus, slot, func, 0x34, 1);
	for (bytes = 0; bytes < 48 && pos >= 0x40; bytes++) {
		uint8_t id;

		pos &= ~3;
		id = early_read(v, bus, slot, func, pos, 1);
		if (id == 0xff)
			break;
		if (id == cap)
			return pos;
		pos = early_read(v, bus, slot, func, pos + 1, 1);
	}
	return 0;
}

/*
 * aperture_64.c's search_agp_bridge() (6.1 to 7.2), up to read_agp()'s
 * reads: returns the aperture's bus address (0: none or invalid), sets
 * *valid_agp when it found an AGP bridge.
 */
static uint32_t search_agp_bridge(struct vcpu *v, int *valid_agp)
{
	int bus, slot, func;

	for (bus = 0; bus < 256; bus++) {
		for (slot = 0; slot < 32; slot++) {
			for (func = 0; func < 8; func++) {
				uint32_t class = early_read(v, bus, slot, func, 0x08, 4);
				int cap;

				if (class == 0xffffffff)
					break;
				switch (class >> 16) {
				case PCI_CLASS_BRIDGE_HOST:
				case PCI_CLASS_BRIDGE_OTHER:
					cap = find_cap(v, bus, slot, func, PCI_CAP_ID_AGP);
					if (!cap)
						break;
					*valid_agp = 1;
					/* read_agp(): APSIZE, then the aperture BAR */
					early_read(v, bus, slot, func, cap + 0x14, 2);
					return early_read(v, bus, slot, func, 0x10, 4) & ~((1u << 22) - 1);
				}
				if (!(early_read(v, bus, slot, func, 0x0e, 1) & 0x80))
					break;
			}
		}
	}
	return 0;
}

/*
 * A stock kernel on an AMD family 0xf vCPU searches for an AGP bridge
 * through conf1 twice before it knows whether conf1 exists: each search
 * ends at 00:00.0's AGP capability, in a few exits, not 16,384; the
 * aperture there is 0 (read_agp() ignores it); and Linux's own conf1 and
 * conf2 checks still find no PCI.
 */
UNIT_TEST(pc_io_agp_search, "the AGP aperture search ends at its first probe; still no PCI")
{
	struct vcpu v = { .vm = &io_vm, .run = &io_run.run };
	unsigned long before, exits;
	int valid_agp = 0;
	uint32_t aper, tmp;

	io_board();
	before = io_vm.devices.seen.port_exits;
	aper = search_agp_bridge(&v, &valid_agp);

	exits = io_vm.devices.seen.port_exits - before;
	CHECK(valid_agp, "the search found no AGP bridge");
	CHECK_EQ(aper, 0);
	CHECK(exits <= 20, "one AGP search took %lu port exits (8,192 probes: 16,384)", exits);
	/* any other function: all ones */
	CHECK_EQ(early_read(&v, 0, 1, 0, 0, 4), 0xffffffff);
	CHECK_EQ(early_read(&v, 1, 0, 0, 0, 4), 0xffffffff);
	CHECK_EQ(early_read(&v, 0, 0, 1, 0, 4), 0xffffffff);
	CHECK_EQ(early_read(&v, 0, 0, 0, 0, 4), 0x00081b36);
	/* the bridge's config space, word and byte wide */
	CHECK_EQ(early_read(&v, 0, 0, 0, 0x0a, 2), PCI_CLASS_BRIDGE_HOST);
	CHECK_EQ(early_read(&v, 0, 0, 0, 0x0e, 1), 0);	/* one function */
	/* pci_check_type1() (arch/x86/pci/direct.c): the address must read back */
	pio(&v, 1, 0xcfb, 1, 0x01);
	tmp = pio(&v, 0, 0xcf8, 4, 0);
	pio(&v, 1, 0xcf8, 4, 0x80000000u);
	CHECK(pio(&v, 0, 0xcf8, 4, 0) != 0x80000000u, "conf1 read back: Linux would find PCI");
	pio(&v, 1, 0xcf8, 4, tmp);
	/* pci_check_type2(): 0xcf8 and 0xcfa read back 0 after byte writes of 0 */
	pio(&v, 1, 0xcfb, 1, 0x00);
	pio(&v, 1, 0xcf8, 1, 0x00);
	pio(&v, 1, 0xcfa, 1, 0x00);
	CHECK(pio(&v, 0, 0xcf8, 1, 0) != 0 || pio(&v, 0, 0xcfa, 1, 0) != 0,
	      "conf2 read back: Linux would find PCI");
	CHECK(!io_failed, "an access asked for a reset");
}

/*
 * The board's devices keep their state for #21's migration: what the guest
 * wrote (the CMOS index, conf1's latch) comes back from a saved stream,
 * and the UART's registers and receive FIFO do too.
 */
UNIT_TEST(pc_devices_state, "the PC devices' state saved and restored")
{
	struct vcpu v = { .vm = &io_vm, .run = &io_run.run };
	static uint8_t buf[4096];
	struct device_stream s = { .buf = buf, .cap = sizeof(buf) };
	struct uart_8250 a, b;
	uint8_t byte, rx[3] = { 'h', 'i', '\n' };

	io_board();
	pio(&v, 1, 0x70, 1, 0x0b);
	pio(&v, 1, 0xcf8, 4, 0x80000000u);
	CHECK_EQ(device_bus_save(&io_vm.devices, &s), 0);
	CHECK(s.len > 0, "nothing saved");
	pio(&v, 1, 0x70, 1, 0x00);
	pio(&v, 1, 0xcf8, 4, 0);
	CHECK_EQ(pio(&v, 0, 0xcfc, 4, 0), 0xffffffff);
	CHECK_EQ(device_bus_restore(&io_vm.devices, &s), 0);
	CHECK_EQ(pio(&v, 0, 0x70, 1, 0), 0x0b);
	CHECK_EQ(pio(&v, 0, 0xcfc, 4, 0), 0x00081b36);	/* 00:00.0 latched again */
	CHECK(!io_failed, "an access asked for a reset");

	uart_init(&a, NULL, NULL, NULL);
	byte = 0x5a;
	uart_io(&a, 7, 1, &byte);	/* scratch */
	byte = 0x01;
	uart_io(&a, 1, 1, &byte);	/* IER: receive interrupt */
	CHECK_EQ(uart_receive(&a, rx, sizeof(rx)), 3);
	s = (struct device_stream) { .buf = buf, .cap = sizeof(buf) };
	CHECK_EQ(uart_save(&a, &s), 0);
	uart_init(&b, NULL, NULL, NULL);
	CHECK_EQ(uart_restore(&b, &s), 0);
	CHECK_EQ(s.pos, s.len);
	uart_io(&b, 7, 0, &byte);
	CHECK_EQ(byte, 0x5a);
	uart_io(&b, 1, 0, &byte);
	CHECK_EQ(byte, 0x01);
	uart_io(&b, 0, 0, &byte);
	CHECK_EQ(byte, 'h');
	uart_io(&b, 0, 0, &byte);
	CHECK_EQ(byte, 'i');
	/* a stream cut short is refused */
	s.pos = 0;
	s.len = 4;
	CHECK(uart_restore(&b, &s) != 0, "a short stream restored");
}
