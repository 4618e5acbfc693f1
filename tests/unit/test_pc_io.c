// SPDX-License-Identifier: GPL-2.0
/* A Linux guest's port I/O: the exits it costs, and which ports io_exits names. */
#include <string.h>

#include "pc_io.h"
#include "unit.h"
#include "vm.h"

void test_pc_io_busiest(void)
{
	static struct pc_io_seen seen;
	uint16_t ports[PC_IO_BUSIEST];

	CHECK_EQ(pc_io_busiest(&seen, ports, PC_IO_BUSIEST), 0);
	seen.exits_by_port[0x64] = 10000;
	seen.exits_by_port[0xcf8] = 7;
	seen.exits_by_port[0x3f8] = 500;
	seen.exits_by_port[0x3fd] = 500;
	seen.exits_by_port[0xffff] = 1;
	CHECK_EQ(pc_io_busiest(&seen, ports, PC_IO_BUSIEST), 5);
	CHECK_EQ(ports[0], 0x64);
	CHECK_EQ(ports[1], 0x3f8);	/* ties: the lower port first */
	CHECK_EQ(ports[2], 0x3fd);
	CHECK_EQ(ports[3], 0xcf8);
	CHECK_EQ(ports[4], 0xffff);
	CHECK_EQ(pc_io_busiest(&seen, ports, 2), 2);
	CHECK_EQ(ports[0], 0x64);
	CHECK_EQ(ports[1], 0x3f8);
}

/* one byte-wide port access by a guest, as KVM_EXIT_IO hands it over */
static struct vm io_vm;
static union {
	struct kvm_run run;
	uint8_t bytes[4096];
} io_run;

static int io_failed;	/* pc_io_port() asked for a reset */

static uint8_t inb(struct vcpu *v, uint16_t port)
{
	io_run.run.exit_reason = KVM_EXIT_IO;
	io_run.run.io.direction = KVM_EXIT_IO_IN;
	io_run.run.io.size = 1;
	io_run.run.io.port = port;
	io_run.run.io.count = 1;
	io_run.run.io.data_offset = 2048;
	io_run.bytes[2048] = 0x5a;
	io_failed |= pc_io_port(v) != 0;
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
	unsigned long before = io_vm.io_seen.port_exits;
	int count = 0, i;

	*found = 1;
	while (inb(v, I8042_STATUS) & I8042_STR_OBF) {
		if (count++ >= 16) {
			*found = 0;
			return io_vm.io_seen.port_exits - before;
		}
		inb(v, I8042_DATA);
	}
	for (i = 0; i < 10000 && !(inb(v, I8042_STATUS) & I8042_STR_OBF); i++)
		;
	return io_vm.io_seen.port_exits - before;
}

/* a Linux guest finds no keyboard controller at once, yet can reset through it */
void test_pc_io_i8042(void)
{
	struct vcpu v = { .vm = &io_vm, .run = &io_run.run };
	int found;
	unsigned long exits = linux_i8042_probe(&v, &found);

	CHECK(!found, "Linux's i8042 probe: no controller");
	CHECK(exits <= 40, "the probe took %lu port exits (10,000 polls: a status of 0)", exits);
	/* reboot: kb_wait() waits for an empty input buffer, then 0xfe pulses reset */
	CHECK_EQ(inb(&v, I8042_STATUS) & I8042_STR_IBF, 0);
	CHECK(!io_failed, "a read asked for a reset");
}
