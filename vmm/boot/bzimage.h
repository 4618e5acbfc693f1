/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An x86 bzImage as the boot protocol describes it
 * (Documentation/arch/x86/boot.rst): the setup header, and where the
 * protected-mode kernel lies in the file. Pure: it only reads the bytes it
 * is given, so the host unit tests and the fuzzer can feed it anything.
 */
#ifndef HWLAB_BZIMAGE_H
#define HWLAB_BZIMAGE_H

#include <stddef.h>
#include <stdint.h>
#include <asm/bootparam.h>

/* The oldest protocol with a 64-bit entry (XLF_KERNEL_64) and init_size. */
#define BZIMAGE_MIN_VERSION	0x020c

struct bzimage {
	struct setup_header hdr;	/* copied out of the file */
	size_t hdr_len;			/* bytes of it the file defines, from 0x1f1 */
	size_t kernel_offset;		/* the protected-mode kernel in the file */
	size_t kernel_size;
};

/*
 * Parse and check the image: "HdrS", protocol >= 2.12, a 64-bit entry,
 * LOADED_HIGH, and a protected-mode part inside the file. Returns 0, or -1
 * with the reason in err.
 */
int bzimage_parse(const uint8_t *data, size_t size, struct bzimage *out, char *err,
		  size_t errlen);

#endif
