/* SPDX-License-Identifier: GPL-2.0 */
/* Load a static x86-64 ELF guest image into guest RAM. */
#ifndef HWLAB_ELF_LOAD_H
#define HWLAB_ELF_LOAD_H

#include <stddef.h>
#include <stdint.h>

#include "core/memslot.h"

/*
 * Check that image[0..size) is an ELF64 x86-64 executable whose PT_LOAD
 * segments lie inside the file and inside guest RAM, at or above
 * GUEST_LOAD_GPA (below it is the boot area), disjoint and in ascending
 * order, then copy them in (and zero their .bss). Returns 0 and the entry
 * point, or -1 with a message naming the segment and its range.
 */
int elf_load(const struct memslot_table *t, const uint8_t *image, size_t size,
	     uint64_t *entry, char *err, size_t errlen);

#endif
