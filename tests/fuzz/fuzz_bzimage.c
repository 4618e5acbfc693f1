// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer: bzimage_parse() on any bytes, copied into a buffer of exactly
 * their size so that ASan catches a read past the end of the file.
 */
#include <stdlib.h>
#include <string.h>

#include "boot/bzimage.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size ? size : 1);
	struct bzimage bz;
	char err[256];

	if (!copy)
		abort();
	memcpy(copy, data, size);
	if (!bzimage_parse(copy, size, &bz, err, sizeof(err))) {
		/* what the loader then trusts: the kernel lies inside the file */
		if (bz.kernel_offset + bz.kernel_size != size || bz.hdr_len > sizeof(bz.hdr))
			abort();
	}
	free(copy);
	return 0;
}
