// SPDX-License-Identifier: GPL-2.0
#include "guest_image.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "log.h"

int guest_image_read(struct guest_image *img, const char *path)
{
	FILE *f = fopen(path, "rb");
	long size;

	img->path = path;
	if (!f) {
		pr_errno("cannot open guest image %s", path);
		return -1;
	}
	if (fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0) {
		pr_errno("cannot read guest image %s", path);
		fclose(f);
		return -1;
	}
	rewind(f);
	img->data = malloc(size > 0 ? size : 1);
	if (!img->data || fread(img->data, 1, size, f) != (size_t)size) {
		pr_err("cannot read guest image %s", path);
		fclose(f);
		return -1;
	}
	fclose(f);
	img->size = size;
	return 0;
}
