// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer: ucall_decode() on any guest memory. The input is the 4 bytes
 * of the I/O exit (the GPA) followed by guest RAM, split into two memslots
 * back to back in guest-physical space, each copied into a malloc() of its
 * exact size so that ASan catches a read past either one.
 */
#include <stdlib.h>
#include <string.h>

#include "hwlab/ucall_decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct ucall_context ctx = { .vcpu = 3, .boot = 1, .last_injected_gpa = 0x400000 };
	struct memslot_table t = { .count = 2 };
	struct ucall_decoded d;
	size_t ram, half, i;
	int r;

	if (size < 4)
		return 0;
	ram = size - 4;
	half = ram / 2;
	t.slots[0] = (struct memslot){ .id = 0, .gpa = 0, .size = half };
	t.slots[1] = (struct memslot){ .id = 1, .gpa = half, .size = ram - half };
	for (i = 0; i < 2; i++) {
		t.slots[i].hva = malloc(t.slots[i].size ? t.slots[i].size : 1);
		memcpy(t.slots[i].hva, data + 4 + t.slots[i].gpa, t.slots[i].size);
	}
	r = ucall_decode(&t, data, &ctx, &d);
	/* whatever the guest wrote, one well-formed report line comes out */
	if (!d.event || !memchr(d.members, 0, sizeof(d.members)))
		abort();
	for (i = 0; d.members[i]; i++)
		if ((unsigned char)d.members[i] < 0x20)
			abort();	/* a raw control character would break the line */
	if (r == 0 && !memchr(d.uc.msg, 0, sizeof(d.uc.msg)))
		abort();
	for (i = 0; i < 2; i++)
		free(t.slots[i].hva);
	return 0;
}
