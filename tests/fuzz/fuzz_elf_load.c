// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer: elf_load() on any bytes. Guest RAM is two memslots back to back
 * in guest-physical space but apart in host memory, each its own malloc(),
 * so that ASan catches a write past either one.
 */
#include <stdlib.h>
#include <string.h>

#include "boot/elf_load.h"

#define SLOT_SIZE (2u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct memslot_table ram;

static void ram_setup(void)
{
	unsigned int i;

	ram.count = 2;
	for (i = 0; i < ram.count; i++) {
		ram.slots[i] = (struct memslot){ .id = i, .gpa = (uint64_t)i * SLOT_SIZE,
						 .size = SLOT_SIZE, .hva = malloc(SLOT_SIZE) };
		if (!ram.slots[i].hva)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t entry = 0;
	char err[256];

	if (!ram.count)
		ram_setup();
	err[0] = 0;
	if (elf_load(&ram, data, size, &entry, err, sizeof(err)) == 0) {
		/* accepted: the entry point is in guest RAM */
		if (!memslot_gpa_to_hva(&ram, entry, 1))
			abort();
	} else if (!memchr(err, 0, sizeof(err)) || !err[0]) {
		abort();	/* a refusal always says why */
	}
	return 0;
}
