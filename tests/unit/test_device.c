// SPDX-License-Identifier: GPL-2.0
/* The device registry (core/device.c): ranges, dispatch, absent ports, reset order, state. */
#include <string.h>

#include "core/device.h"
#include "core/vm.h"
#include "unit.h"

static struct vm dev_vm;
static union {
	struct kvm_run run;
	uint8_t bytes[4096];
} dev_run;

/* a test device: counts its accesses, remembers the last one, keeps one byte */
struct fake {
	unsigned int accesses, resets;
	uint64_t last_addr;
	unsigned int last_len;
	uint8_t reg;
	int answer;		/* what io returns */
};

static unsigned int reset_order[4], nr_reset;

static int fake_io(struct vcpu *v, void *opaque, uint64_t addr, int is_write, uint8_t *data,
		   unsigned int len)
{
	struct fake *f = opaque;

	(void)v;
	f->accesses++;
	f->last_addr = addr;
	f->last_len = len;
	if (is_write)
		f->reg = data[0];
	else
		memset(data, f->reg, len);
	return f->answer;
}

static int fake_reset(struct vm *vm, void *opaque)
{
	struct fake *f = opaque;

	(void)vm;
	f->resets++;
	reset_order[nr_reset++] = f->reg;
	return 0;
}

static int fake_save(void *opaque, struct device_stream *out)
{
	device_stream_put(out, &((struct fake *)opaque)->reg, 1);
	return 0;
}

static int fake_restore(void *opaque, struct device_stream *in)
{
	device_stream_get(in, &((struct fake *)opaque)->reg, 1);
	return 0;
}

static struct fake fa, fb, fc;
static const struct device dev_a = { "a", &fa, fake_io, fake_reset, fake_save, fake_restore };
static const struct device dev_b = { "b", &fb, fake_io, fake_reset, fake_save, fake_restore };
static const struct device dev_c = { "c", &fc, fake_io, fake_reset, NULL, NULL };

/* a port access as KVM_EXIT_IO hands it over; returns device_port_exit()'s answer */
static int port(int out, uint16_t p, unsigned int size, unsigned int count, uint32_t *val)
{
	struct vcpu v = { .vm = &dev_vm, .run = &dev_run.run };
	int r;

	dev_run.run.exit_reason = KVM_EXIT_IO;
	dev_run.run.io.direction = out ? KVM_EXIT_IO_OUT : KVM_EXIT_IO_IN;
	dev_run.run.io.size = size;
	dev_run.run.io.port = p;
	dev_run.run.io.count = count;
	dev_run.run.io.data_offset = 2048;
	memcpy(&dev_run.bytes[2048], val, 4);
	r = device_port_exit(&v);
	memcpy(val, &dev_run.bytes[2048], 4);
	return r;
}

/* a: 0x70-0x71; b: 0x3f8-0x3ff and 0x60; c: MMIO 0x71. 0, or -1. */
static int setup_bus(void)
{
	struct device_bus *bus = &dev_vm.devices;

	memset(bus, 0, sizeof(*bus));
	device_bus_init(bus);
	memset(&fa, 0, sizeof(fa));
	memset(&fb, 0, sizeof(fb));
	memset(&fc, 0, sizeof(fc));
	return device_register(bus, &dev_a, DEVICE_PIO, 0x70, 2) ||
	       device_register(bus, &dev_b, DEVICE_PIO, 0x3f8, 8) ||
	       device_register(bus, &dev_b, DEVICE_PIO, 0x60, 1) ||	/* a second range */
	       device_register(bus, &dev_c, DEVICE_MMIO, 0x71, 1) ? -1 : 0;	/* another space */
}

UNIT_TEST(device_register, "device registry: ranges, overlaps refused, lookup")
{
	struct device_bus *bus = &dev_vm.devices;

	CHECK_EQ(setup_bus(), 0);
	/* overlaps: inside, across either end, the same range again */
	CHECK_EQ(device_register(bus, &dev_c, DEVICE_PIO, 0x71, 1), -1);
	CHECK_EQ(device_register(bus, &dev_c, DEVICE_PIO, 0x3f0, 9), -1);
	CHECK_EQ(device_register(bus, &dev_c, DEVICE_PIO, 0x3ff, 4), -1);
	CHECK_EQ(device_register(bus, &dev_a, DEVICE_PIO, 0x70, 2), -1);
	CHECK_EQ(device_register(bus, &dev_c, DEVICE_PIO, 0x100, 0), -1);	/* empty */
	CHECK_EQ(device_register(bus, &dev_c, DEVICE_PIO, 0x3f7, 1), 0);	/* adjacent is fine */
	CHECK_EQ(bus->nr_devices, 3);
	CHECK_EQ(bus->nr_ranges, 5);
	CHECK(device_lookup(bus, DEVICE_PIO, 0x70)->dev == &dev_a, "0x70 is not a's");
	CHECK(device_lookup(bus, DEVICE_PIO, 0x71)->dev == &dev_a, "0x71 is not a's");
	CHECK(device_lookup(bus, DEVICE_PIO, 0x72) == NULL, "0x72 has a device");
	CHECK(device_lookup(bus, DEVICE_PIO, 0x6f) == NULL, "0x6f has a device");
	CHECK(device_lookup(bus, DEVICE_PIO, 0x60)->dev == &dev_b, "0x60 is not b's");
	CHECK(device_lookup(bus, DEVICE_PIO, 0x3f7)->dev == &dev_c, "0x3f7 is not c's");
	CHECK(device_lookup(bus, DEVICE_PIO, 0x3ff)->dev == &dev_b, "0x3ff is not b's");
	CHECK(device_lookup(bus, DEVICE_PIO, 0x400) == NULL, "0x400 has a device");
	CHECK(device_lookup(bus, DEVICE_MMIO, 0x71)->dev == &dev_c, "MMIO 0x71 is not c's");
	CHECK(device_lookup(bus, DEVICE_MMIO, 0x70) == NULL, "MMIO 0x70 has a device");
}

UNIT_TEST(device_dispatch, "device registry: a port exit reaches its device; absent ports counted")
{
	struct device_seen *seen = &dev_vm.devices.seen;
	unsigned long ignored = 0;
	uint32_t val = 0x42;

	CHECK_EQ(setup_bus(), 0);
	CHECK_EQ(port(1, 0x70, 1, 1, &val), 0);
	CHECK_EQ(fa.reg, 0x42);
	CHECK_EQ(fa.last_addr, 0x70);
	val = 0;
	CHECK_EQ(port(0, 0x71, 1, 1, &val), 0);
	CHECK_EQ(val & 0xff, 0x42);
	/* a whole access in one range: one call */
	fb.accesses = 0;
	CHECK_EQ(port(0, 0x3f8, 4, 1, &val), 0);
	CHECK_EQ(fb.accesses, 1);
	CHECK_EQ(fb.last_len, 4);
	/* rep ins: a byte at a time */
	CHECK_EQ(port(0, 0x3f8, 2, 2, &val), 0);
	CHECK_EQ(fb.accesses, 5);
	CHECK_EQ(fb.last_len, 1);
	CHECK_EQ(seen->ignored, ignored);
	/* across a range's end: 0x71 the device's, 0x72 and 0x73 absent, all ones */
	fa.reg = 0x11;
	val = 0;
	CHECK_EQ(port(0, 0x71, 2, 1, &val), 0);
	CHECK_EQ(val & 0xffff, 0xff11);
	CHECK_EQ(seen->ignored, ignored + 1);
	/* an unregistered port: absent, reported once, counted each time */
	val = 0;
	CHECK_EQ(port(0, 0x1234, 1, 1, &val), 0);
	CHECK_EQ(val & 0xff, 0xff);
	CHECK_EQ(port(1, 0x1234, 1, 1, &val), 0);
	CHECK_EQ(seen->ignored, ignored + 3);
	CHECK_EQ(seen->nr_ports, 2);
	CHECK_EQ(seen->ports[0], 0x72);
	CHECK_EQ(seen->ports[1], 0x1234);
	CHECK_EQ(seen->exits_by_port[0x1234], 2);
	/* a device that declines a whole access: each byte asked again, then absent */
	fb.answer = DEVICE_ABSENT;
	fb.accesses = 0;
	CHECK_EQ(port(0, 0x3f8, 2, 1, &val), 0);
	CHECK_EQ(fb.accesses, 3);
	CHECK_EQ(val & 0xffff, 0xffff);
	CHECK_EQ(seen->ignored, ignored + 5);
	/* a reset request ends the exit at once */
	fb.answer = -1;
	CHECK_EQ(port(1, 0x60, 1, 1, &val), -1);
	fb.answer = 0;
}

UNIT_TEST(device_reset_state, "device registry: reset hooks in registration order; state saved and restored")
{
	uint8_t buf[64];
	struct device_stream s = { .buf = buf, .cap = sizeof(buf) };

	CHECK_EQ(setup_bus(), 0);
	fa.reg = 1;
	fb.reg = 2;
	fc.reg = 3;
	nr_reset = 0;
	CHECK_EQ(device_bus_reset(&dev_vm), 0);
	CHECK_EQ(nr_reset, 3);
	CHECK_EQ(reset_order[0], 1);
	CHECK_EQ(reset_order[1], 2);
	CHECK_EQ(reset_order[2], 3);
	/* c has no save hook: two records, "a" and "b", a byte each */
	CHECK_EQ(device_bus_save(&dev_vm.devices, &s), 0);
	CHECK_EQ(s.len, 2 * (2 + 4 + 1));
	fa.reg = fb.reg = 0;
	CHECK_EQ(device_bus_restore(&dev_vm.devices, &s), 0);
	CHECK_EQ(fa.reg, 1);
	CHECK_EQ(fb.reg, 2);
	/* no room: refused */
	s = (struct device_stream) { .buf = buf, .cap = 8 };
	CHECK_EQ(device_bus_save(&dev_vm.devices, &s), -1);
	/* a record for a device that is not here */
	s = (struct device_stream) { .buf = buf, .cap = sizeof(buf) };
	device_stream_put(&s, "z", 2);
	device_stream_put(&s, &(uint32_t){ 0 }, 4);
	CHECK_EQ(device_bus_restore(&dev_vm.devices, &s), -1);
}

/* no byte of text below 0x20 but each line's end, none at or past 0x7f */
static int one_clean_line(const char *text, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (((unsigned char)text[i] < 0x20 && (text[i] != '\n' || i != n - 1)) ||
		    (unsigned char)text[i] >= 0x7f)
			return 0;
	return n > 0;
}

UNIT_TEST(device_restore_name_escaped, "device registry: a stream's device name reaches stderr escaped")
{
	/* ESC [ 2 J clears the operator's screen; the newline fakes a line of our own */
	static const char hostile[] = "\x1b[2J\nhwlab-vmm: restored\x9b\xc3";
	uint8_t buf[256];
	struct device_stream s = { .buf = buf, .cap = sizeof(buf) };
	char err[1024];
	size_t n;

	CHECK_EQ(setup_bus(), 0);
	device_stream_put(&s, hostile, sizeof(hostile));
	device_stream_put(&s, &(uint32_t){ 0 }, 4);
	unit_stderr_catch();
	CHECK_EQ(device_bus_restore(&dev_vm.devices, &s), -1);
	n = unit_stderr_caught(err, sizeof(err));
	CHECK(one_clean_line(err, n), "one line, no control byte: '%s'", err);
	CHECK(strstr(err, "no device '\\x1b[2J\\x0ahwlab-vmm: restored\\x9b\\xc3' here") != NULL,
	      "the name escaped whole: '%s'", err);

	/* a name cut short in its record, and a very long one: escaped, and bounded */
	s = (struct device_stream) { .buf = buf, .cap = sizeof(buf) };
	memset(buf, 0x1b, 200);
	buf[200] = 0;
	s.len = 201;
	device_stream_put(&s, &(uint32_t){ 50 }, 4);
	unit_stderr_catch();
	CHECK_EQ(device_bus_restore(&dev_vm.devices, &s), -1);
	n = unit_stderr_caught(err, sizeof(err));
	CHECK(one_clean_line(err, n), "one line, no control byte: '%s'", err);
	CHECK(strstr(err, "\\x1b...'s record is cut short") != NULL && n < 400,
	      "cut past 64 bytes: '%s'", err);
}
