// SPDX-License-Identifier: GPL-2.0
/*
 * Where a VMM publishes its memslot table (lib/memmap.h): the private
 * directory per user, made and checked before anything is created in it,
 * and the stale tables of earlier VMMs cleaned out of it.
 */
#include "memmap.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parse_num.h"

void memmap_default_dir(char *buf, size_t len, uid_t uid)
{
	if (uid == 0)
		snprintf(buf, len, "%s", HWLAB_MEMMAP_ROOT_DIR);
	else
		snprintf(buf, len, HWLAB_MEMMAP_USER_DIR, (unsigned int)uid);
}

void memmap_default_path(char *buf, size_t len, pid_t pid, uid_t uid)
{
	char dir[64];

	memmap_default_dir(dir, sizeof(dir), uid);
	snprintf(buf, len, "%s/" HWLAB_MEMMAP_FILE, dir, (int)pid);
}

int memmap_private_dir(const char *dir, char *err, size_t errlen)
{
	struct stat st;
	int fd;

	if (mkdir(dir, 0700) && errno != EEXIST) {
		snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
		return -1;
	}
	/*
	 * O_NOFOLLOW: a symlink planted here could point into someone else's
	 * directory. The checks are then made on the open directory, and the
	 * caller creates and removes files relative to it: the directory
	 * checked is the one used, whatever happens to the name meanwhile.
	 */
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && (errno == ELOOP || errno == ENOTDIR)) {
		snprintf(err, errlen, "%s is not a directory (%s): refusing to publish there", dir,
			 !lstat(dir, &st) && S_ISLNK(st.st_mode) ? "a symbolic link" :
			 "another kind of file");
		return -1;
	}
	if (fd < 0 || fstat(fd, &st)) {
		snprintf(err, errlen, "cannot open %s: %s", dir, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (st.st_uid != geteuid()) {
		snprintf(err, errlen, "%s is owned by uid %u, not by this process's uid %u: "
			 "refusing to publish there", dir, (unsigned int)st.st_uid,
			 (unsigned int)geteuid());
		close(fd);
		return -1;
	}
	if ((st.st_mode & 0777) != 0700) {
		snprintf(err, errlen, "%s has mode %04o, not 0700: refusing to publish there",
			 dir, (unsigned int)(st.st_mode & 07777));
		close(fd);
		return -1;
	}
	return fd;
}

/* "N.memmap" with N a pid (no sign, no leading zero): N, else 0. */
static pid_t table_name_pid(const char *name)
{
	char digits[16];
	size_t n = strspn(name, "0123456789");
	uint64_t v;

	if (!n || n >= sizeof(digits) || strcmp(name + n, ".memmap"))
		return 0;
	memcpy(digits, name, n);
	digits[n] = 0;
	if (parse_u64(digits, HWLAB_PID_MAX, &v))
		return 0;
	return v;
}

/*
 * Is the table name (of pid) in dirfd stale? Only a regular file that
 * this euid owns is even looked at (fstatat without following a link).
 */
static int table_is_stale(int dirfd, const char *name, pid_t pid)
{
	static struct memmap m;
	struct stat st;
	char err[128];
	FILE *f;
	int fd, r;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid())
		return 0;
	/* ours has not been created yet: a file with our pid is an earlier VMM's */
	if (pid == getpid())
		return 1;
	if (kill(pid, 0) && errno == ESRCH)
		return 1;
	/* alive: stale only if the header names another process with that pid */
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0;
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return 0;
	}
	r = !memmap_read(f, &m, err, sizeof(err)) && m.pid == pid &&
	    proc_start_time(pid) != m.start;
	fclose(f);
	return r;
}

int memmap_clean_stale(int dirfd, char *err, size_t errlen)
{
	struct dirent *e;
	DIR *d;
	int fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0), removed = 0;

	/* a duplicate for readdir: closedir() closes it, the caller's stays */
	d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		snprintf(err, errlen, "cannot list the table directory: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while ((e = readdir(d))) {
		pid_t pid = table_name_pid(e->d_name);

		if (pid && table_is_stale(dirfd, e->d_name, pid) &&
		    !unlinkat(dirfd, e->d_name, 0))
			removed++;
	}
	closedir(d);
	return removed;
}
