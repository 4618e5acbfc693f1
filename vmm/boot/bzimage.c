// SPDX-License-Identifier: GPL-2.0
#include "boot/bzimage.h"

#include <stdio.h>
#include <string.h>

#define SETUP_HEADER_OFFSET	0x1f1
#define HDRS_MAGIC		0x53726448	/* "HdrS" */
#define BOOT_FLAG		0xaa55
/* The header runs to 0x202 plus the jump's displacement byte at 0x201. */
#define HEADER_END_BYTE		0x201

int bzimage_parse(const uint8_t *data, size_t size, struct bzimage *out, char *err,
		  size_t errlen)
{
	struct setup_header *h = &out->hdr;
	unsigned int setup_sects;
	size_t hdr_end;

	memset(out, 0, sizeof(*out));
	if (size < 0x400) {
		snprintf(err, errlen, "%zu bytes: too short for a bzImage", size);
		return -1;
	}
	/*
	 * What the file defines of the header ends at 0x202 + data[0x201];
	 * a newer kernel's longer header is cut to what this VMM knows.
	 */
	hdr_end = 0x202 + data[HEADER_END_BYTE];
	out->hdr_len = hdr_end - SETUP_HEADER_OFFSET;
	if (out->hdr_len > sizeof(*h))
		out->hdr_len = sizeof(*h);
	memcpy(h, data + SETUP_HEADER_OFFSET, out->hdr_len);

	if (h->header != HDRS_MAGIC || h->boot_flag != BOOT_FLAG) {
		snprintf(err, errlen, "no x86 boot header (magic %#x, boot flag %#x): not a bzImage",
			 h->header, h->boot_flag);
		return -1;
	}
	if (h->version < BZIMAGE_MIN_VERSION ||
	    out->hdr_len < offsetof(struct setup_header, init_size) + sizeof(h->init_size)) {
		snprintf(err, errlen, "boot protocol %u.%02u: need at least %u.%02u (Linux 3.8)",
			 h->version >> 8, h->version & 0xff, BZIMAGE_MIN_VERSION >> 8,
			 BZIMAGE_MIN_VERSION & 0xff);
		return -1;
	}
	if (!(h->xloadflags & XLF_KERNEL_64)) {
		snprintf(err, errlen, "the kernel has no 64-bit entry point (xloadflags %#x)",
			 h->xloadflags);
		return -1;
	}
	if (!(h->loadflags & LOADED_HIGH)) {
		snprintf(err, errlen, "a zImage (loaded low): only bzImages are supported");
		return -1;
	}
	/* 0 means 4, for kernels older than any that gets here */
	setup_sects = h->setup_sects ? h->setup_sects : 4;
	out->kernel_offset = (setup_sects + 1) * 512ULL;
	if (out->kernel_offset >= size) {
		snprintf(err, errlen, "setup code of %u sectors runs past the file's end", setup_sects);
		return -1;
	}
	out->kernel_size = size - out->kernel_offset;
	if (h->init_size < out->kernel_size) {
		snprintf(err, errlen, "init_size %#x is smaller than the kernel's %#zx bytes",
			 h->init_size, out->kernel_size);
		return -1;
	}
	return 0;
}
