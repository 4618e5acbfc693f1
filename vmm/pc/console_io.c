// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include "pc/console_io.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "log.h"
#include "memmap.h"
#include "path.h"

static int same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/*
 * Is the directory dfd the memslot tables' (this user's private one)? A
 * guest line appended to a table there becomes a slot that hwpoison-guest
 * believes; a new file there is no better.
 */
static int is_table_dir(int dfd)
{
	char table_dir[64];
	struct stat d, t;

	memmap_default_dir(table_dir, sizeof(table_dir), geteuid());
	return !fstat(dfd, &d) && !stat(table_dir, &t) && same_file(&d, &t);
}

/* Which files may take the guest's output; NULL, or why not. */
static const char *refusal(int fd, const struct stat *st, char *why, size_t len)
{
	if (S_ISREG(st->st_mode)) {
		if (st->st_uid != geteuid()) {
			snprintf(why, len, "it belongs to uid %u, not to this VMM's uid %u: the guest's "
				 "output is not appended to another user's file",
				 (unsigned int)st->st_uid, (unsigned int)geteuid());
			return why;
		}
		if (st->st_nlink != 1) {
			snprintf(why, len, "it has %lu hard links: another of its names may be a file "
				 "that must not get the guest's output", (unsigned long)st->st_nlink);
			return why;
		}
		/*
		 * A running VMM holds a lock on its memslot table for its life,
		 * wherever it published it (--memmap, another mount namespace's
		 * /run seen through /proc/PID/root): a guest line appended there
		 * became a slot the tool believed. A file someone holds a lock
		 * on is somebody's: not the console's.
		 */
		if (flock(fd, LOCK_EX | LOCK_NB)) {
			snprintf(why, len, "another process holds a lock on it (a running VMM's "
				 "memslot table is locked so): the guest's output is not appended to "
				 "a file in use");
			return why;
		}
		flock(fd, LOCK_UN);
		return NULL;
	}
	if (S_ISFIFO(st->st_mode))
		return NULL;
	if (S_ISCHR(st->st_mode) && (isatty(fd) || st->st_rdev == makedev(1, 3)))
		return NULL;
	return "it is not a regular file, a FIFO, a terminal or /dev/null";
}

int console_open_output(const char *path)
{
	const char *base, *why;
	char buf[160];
	struct stat st;
	int dfd, fd;

	dfd = path_open_parent(path, &base);
	if (dfd < 0) {
		pr_errno("cannot open the console %s: its directory", path);
		return -1;
	}
	if (is_table_dir(dfd)) {
		close(dfd);
		pr_err("refusing --console %s: it is in the memslot tables' directory, where a "
		       "guest line could become a slot of a VMM's table", path);
		return -1;
	}
	/*
	 * O_NOFOLLOW: a planted symlink (a dangling one too, which O_CREAT would
	 * create the target of) is refused, not written through. O_NONBLOCK: a
	 * FIFO with no reader fails with ENXIO instead of blocking start-up.
	 */
	fd = openat(dfd, *base ? base : ".",
		    O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
	close(dfd);
	if (fd < 0) {
		if (errno == ELOOP)
			pr_err("refusing --console %s: it is a symbolic link (the guest's output is "
			       "never written through one)", path);
		else if (errno == ENXIO)
			pr_err("cannot open the console %s: a FIFO with no reader (start its reader "
			       "first: the VMM does not wait for one)", path);
		else
			pr_errno("cannot open the console %s", path);
		return -1;
	}
	why = fstat(fd, &st) ? strerror(errno) : refusal(fd, &st, buf, sizeof(buf));
	if (why) {
		close(fd);
		pr_err("refusing --console %s: %s", path, why);
		return -1;
	}
	return fd;
}

int console_open_input(const char *path)
{
	int fd;

	struct stat st;

	if (!strcmp(path, "-"))
		return STDIN_FILENO;
	/*
	 * A FIFO with no writer yet: open at once, the input thread waits for
	 * one. What is read goes to the guest, so no symlink is followed and no
	 * other user's file is read: a planted link to a secret of root's would
	 * hand it to the guest.
	 */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ELOOP)
			pr_err("refusing --console-in %s: it is a symbolic link (the guest is never "
			       "fed through one)", path);
		else
			pr_errno("cannot open the console input %s", path);
		return -1;
	}
	if (!fstat(fd, &st) && S_ISDIR(st.st_mode)) {
		pr_err("refusing --console-in %s: it is a directory", path);
		close(fd);
		return -1;
	}
	if (fstat(fd, &st) || (S_ISREG(st.st_mode) && st.st_uid != geteuid())) {
		pr_err("refusing --console-in %s: it belongs to uid %u, not to this VMM's uid %u: "
		       "another user's file is not fed to the guest", path,
		       (unsigned int)st.st_uid, (unsigned int)geteuid());
		close(fd);
		return -1;
	}
	return fd;
}

int console_default_output(void)
{
	struct stat out, err;

	/*
	 * One terminal for both is a person reading, and /dev/null for both
	 * is nobody: neither parses report lines.
	 */
	if (!fstat(STDOUT_FILENO, &out) && !fstat(STDERR_FILENO, &err) && same_file(&out, &err) &&
	    !S_ISCHR(out.st_mode)) {
		pr_err("the Linux guest's console goes to stderr without --console, and stderr is "
		       "stdout here: guest lines would read as report lines; give --console FILE "
		       "(or /dev/null)");
		return -1;
	}
	return STDERR_FILENO;
}
