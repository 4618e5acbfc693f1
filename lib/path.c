// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include "path.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>

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
