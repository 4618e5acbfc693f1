// SPDX-License-Identifier: GPL-2.0
#include "boot/guest_image.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

/* Far more than any guest this VMM boots, far less than would hurt to malloc. */
#define GUEST_IMAGE_MAX_SIZE	(64LL << 20)

static const char *file_kind(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISSOCK(mode))
		return "a socket";
	return "not a regular file";
}

/* read(2) until size bytes or end of file; returns the bytes read, or -1. */
static ssize_t read_all(int fd, uint8_t *buf, size_t size)
{
	size_t done = 0;

	while (done < size) {
		ssize_t n = read(fd, buf + done, size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		done += n;
	}
	return done;
}

/*
 * Only a regular file of sane size: a FIFO would block the VMM forever
 * (hence O_NONBLOCK, so that even open() does not wait for a writer), and a
 * directory or device has no size to trust.
 */
static int open_image(const char *path, off_t *size)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0) {
		pr_errno("cannot open guest image %s", path);
		return -1;
	}
	if (fstat(fd, &st)) {
		pr_errno("cannot stat guest image %s", path);
	} else if (!S_ISREG(st.st_mode)) {
		pr_err("guest image %s is %s, not a regular file", path, file_kind(st.st_mode));
	} else if (st.st_size > GUEST_IMAGE_MAX_SIZE) {
		pr_err("guest image %s is %lld bytes, more than the %lld MiB a guest image may be",
		       path, (long long)st.st_size, GUEST_IMAGE_MAX_SIZE >> 20);
	} else {
		*size = st.st_size;
		return fd;
	}
	close(fd);
	return -1;
}

int guest_image_read(struct guest_image *img, const char *path)
{
	off_t size;
	ssize_t got;
	int fd = open_image(path, &size);

	img->path = path;
	img->data = NULL;
	img->size = 0;
	if (fd < 0)
		return -1;
	img->data = malloc(size > 0 ? size : 1);
	if (!img->data) {
		pr_err("no memory for the %lld-byte guest image %s", (long long)size, path);
		close(fd);
		return -1;
	}
	got = read_all(fd, img->data, size);
	if (got != size) {
		if (got < 0)
			pr_errno("cannot read guest image %s", path);
		else
			pr_err("guest image %s shrank while it was read (%zd of %lld bytes)", path,
			       got, (long long)size);
		free(img->data);
		img->data = NULL;
		close(fd);
		return -1;
	}
	close(fd);
	img->size = size;
	return 0;
}
