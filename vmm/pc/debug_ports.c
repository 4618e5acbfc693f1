// SPDX-License-Identifier: GPL-2.0
#include "pc/debug_ports.h"

#include "core/device.h"
#include "core/vm.h"

#define PORT_POST		0x80

/* writes dropped; a read leaves what KVM's buffer held, as it always has */
static int post_io(struct vcpu *v, void *opaque, uint64_t port, int is_write, uint8_t *data,
		   unsigned int len)
{
	(void)v, (void)opaque, (void)port, (void)is_write, (void)data, (void)len;
	return 0;
}

/* No state: no hooks but io. */
static const struct device post = { .name = "post", .io = post_io };

int debug_ports_register(struct vm *vm)
{
	return device_register(&vm->devices, &post, DEVICE_PIO, PORT_POST, 1);
}
