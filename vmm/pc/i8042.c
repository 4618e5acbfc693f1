// SPDX-License-Identifier: GPL-2.0
#include "pc/i8042.h"

#include "core/device.h"
#include "core/report.h"
#include "core/vm.h"

#define PORT_KBD_DATA		0x60
#define PORT_KBD_STATUS		0x64
#define KBD_CMD_PULSE_RESET	0xfe
#define KBD_STATUS_OBF		0x01	/* output buffer full */

static int i8042_io(struct vcpu *v, void *opaque, uint64_t port, int is_write, uint8_t *data,
		    unsigned int len)
{
	unsigned int i;

	(void)opaque;
	for (i = 0; i < len; i++) {
		if (port == PORT_KBD_DATA) {
			if (!is_write)
				data[i] = 0;
			continue;
		}
		if (is_write && data[i] == KBD_CMD_PULSE_RESET) {
			report("guest_reset", "\"vcpu\":%u,\"reason\":\"keyboard controller reset "
			       "(%#x to port %#x)\"", v->id, KBD_CMD_PULSE_RESET, PORT_KBD_STATUS);
			return -1;
		}
		/*
		 * No controller but its reset line. The status reads "output
		 * buffer full, input buffer empty": Linux's i8042 driver then
		 * flushes 16 bytes and says "No controller found" (about 33
		 * exits), where a status of 0 made it wait 10,000 polls of
		 * 50 us for a command byte that never came ("Can't read CTR"),
		 * and the reboot path's kb_wait() still sees the input buffer
		 * empty at once (all ones, as on a board without one, would
		 * make it poll 65,536 times first).
		 */
		if (!is_write)
			data[i] = KBD_STATUS_OBF;
	}
	return 0;
}

/* No state (so no reset or save/restore hooks): only the reset line is there. */
static const struct device i8042 = { .name = "i8042", .io = i8042_io };

int i8042_register(struct vm *vm)
{
	return device_register(&vm->devices, &i8042, DEVICE_PIO, PORT_KBD_DATA, 1) ||
	       device_register(&vm->devices, &i8042, DEVICE_PIO, PORT_KBD_STATUS, 1) ? -1 : 0;
}
