// SPDX-License-Identifier: GPL-2.0
#include "pc/cmos_rtc.h"

#include <stdlib.h>
#include <time.h>

#include "core/device.h"
#include "core/vm.h"
#include "log.h"

#define PORT_CMOS_INDEX		0x70
#define PORT_CMOS_DATA		0x71
#define CMOS_REG_A		0x0a
#define CMOS_REG_B		0x0b
#define CMOS_REG_D		0x0d
#define CMOS_A_DIVIDER		0x26	/* 32.768 kHz, 1024 Hz; UIP clear */
#define CMOS_B_24H		0x02	/* BCD, 24-hour */
#define CMOS_D_VALID		0x80	/* battery good */

struct cmos_rtc {
	struct device dev;
	uint8_t index;		/* what a write to 0x70 selected */
};

static uint8_t bcd(unsigned int v)
{
	return ((v / 10) << 4) | (v % 10);
}

uint8_t cmos_rtc_read(uint8_t index)
{
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	switch (index & 0x7f) {
	case 0x00: return bcd(tm.tm_sec);
	case 0x02: return bcd(tm.tm_min);
	case 0x04: return bcd(tm.tm_hour);
	case 0x06: return bcd(tm.tm_wday + 1);
	case 0x07: return bcd(tm.tm_mday);
	case 0x08: return bcd(tm.tm_mon + 1);
	case 0x09: return bcd(tm.tm_year % 100);
	case 0x32: return bcd(tm.tm_year / 100 + 19);	/* century */
	case CMOS_REG_A: return CMOS_A_DIVIDER;
	case CMOS_REG_B: return CMOS_B_24H;
	case CMOS_REG_D: return CMOS_D_VALID;
	}
	return 0;
}

static int cmos_io(struct vcpu *v, void *opaque, uint64_t port, int is_write, uint8_t *data,
		   unsigned int len)
{
	struct cmos_rtc *c = opaque;
	unsigned int i;

	(void)v;
	for (i = 0; i < len; i++, port++) {
		if (port == PORT_CMOS_INDEX && is_write)
			c->index = data[i];
		else if (port == PORT_CMOS_INDEX)
			data[i] = c->index;
		else if (!is_write)
			data[i] = cmos_rtc_read(c->index);
		/* a data write: the clock is the host's, not to be set */
	}
	return 0;
}

static int cmos_save(void *opaque, struct device_stream *out)
{
	device_stream_put(out, &((struct cmos_rtc *)opaque)->index, 1);
	return 0;
}

static int cmos_restore(void *opaque, struct device_stream *in)
{
	device_stream_get(in, &((struct cmos_rtc *)opaque)->index, 1);
	return 0;
}

int cmos_rtc_register(struct vm *vm)
{
	struct cmos_rtc *c = calloc(1, sizeof(*c));

	if (!c) {
		pr_err("out of memory for the CMOS RTC");
		return -1;
	}
	/* no reset hook: a reboot has always kept the index (firmware rewrites it) */
	c->dev = (struct device) {
		.name = "cmos-rtc", .opaque = c, .io = cmos_io,
		.save = cmos_save, .restore = cmos_restore,
	};
	return device_register(&vm->devices, &c->dev, DEVICE_PIO, PORT_CMOS_INDEX, 2);
}
