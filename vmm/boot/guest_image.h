/* SPDX-License-Identifier: GPL-2.0 */
/* The guest image file, read once into VMM memory and loaded at every boot. */
#ifndef HWLAB_GUEST_IMAGE_H
#define HWLAB_GUEST_IMAGE_H

#include <stddef.h>
#include <stdint.h>

struct guest_image {
	const char *path;
	uint8_t *data;
	size_t size;
};

/* Returns 0, or -1 after a message naming the file and the error. */
int guest_image_read(struct guest_image *img, const char *path);

#endif
