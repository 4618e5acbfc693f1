// SPDX-License-Identifier: GPL-2.0
/*
 * The process behind a memslot table (lib/memmap.h): its start time, which
 * with the pid names one process for the life of the system, and whether it
 * holds the table open, which only the table's writer can.
 */
#include "memmap.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parse_num.h"

int proc_stat_start_time(const char *stat, unsigned long long *start)
{
	/* after the command name, which may hold blanks and ')': field 3 on */
	const char *p = strrchr(stat, ')');
	unsigned int field;
	uint64_t v;

	for (field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (!p)
		return -1;
	p++;
	/* the field, to the next blank or the line's end: decimal, whole */
	if (parse_field_u64(p, strcspn(p, " \n"), 10, ULLONG_MAX, &v))
		return -1;
	*start = v;
	return 0;
}

int proc_status_field(const char *status, const char *name, uint64_t max, uint64_t *out)
{
	size_t len = strlen(name);
	const char *line, *v;

	for (line = status; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		if (strncmp(line, name, len) || line[len] != ':')
			continue;
		v = line + len + 1;
		v += strspn(v, " \t");
		return parse_field_u64(v, strcspn(v, "\n"), 10, max, out);
	}
	return -1;
}

unsigned long long proc_start_time(pid_t pid)
{
	char path[32], buf[1024];
	unsigned long long t;
	ssize_t n;
	int fd;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/stat");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	return proc_stat_start_time(buf, &t) ? 0 : t;
}

int memmap_held_by(pid_t pid, const struct stat *st, char *err, size_t errlen)
{
	char path[32];
	struct dirent *e;
	struct stat fst;
	int fd, held = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		snprintf(err, errlen, "cannot list %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	/*
	 * Each entry is the kernel's link to an open file: stat through it is
	 * the file itself, whatever its name is now (unlinked included).
	 */
	while (!held && (e = readdir(d)))
		held = e->d_name[0] != '.' && !fstatat(fd, e->d_name, &fst, 0) &&
		       fst.st_dev == st->st_dev && fst.st_ino == st->st_ino;
	closedir(d);
	return held;
}
