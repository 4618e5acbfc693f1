// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include "path.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int path_open_parent(const char *path, const char **name)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');

	*name = slash ? slash + 1 : path;
	if (!slash)
		return open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (slash - path >= (long)sizeof(dir)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(dir, path, slash - path);
	dir[slash - path] = 0;
	return open(slash == path ? "/" : dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

int path_open_regular(const char *path, int flags)
{
	struct stat st;
	int fd = open(path, flags | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st)) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	/* (no effect on a regular file; cleared for whoever reads it with stdio) */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}
