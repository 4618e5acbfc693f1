// SPDX-License-Identifier: GPL-2.0
/*
 * Guest RAM's memslot table published for tools (lib/memmap.h): created
 * safely, held open for the VMM's life, removed at every exit. The
 * mappings themselves are guest_ram.c's.
 */
#define _GNU_SOURCE
#include "core/guest_ram.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "memmap.h"
#include "path.h"
#include "core/vm.h"

/*
 * The published table, for guest_ram_unpublish(): its path (for the
 * vmm_start line), and the directory it was created in (held open), its
 * name there and its inode. Removed relative to that directory, and only
 * while the name is still that inode: a path resolved again at exit went
 * wherever a symlink swapped in meanwhile pointed (another user renamed a
 * directory on the way and a root VMM removed a file of the same name
 * elsewhere). Static, so that a signal handler's exit can remove it with
 * async-signal-safe calls alone; published_name is set last and cleared
 * first.
 */
static char published[PATH_MAX];
static char published_name[NAME_MAX + 1];
static int published_dirfd = -1;
static dev_t published_dev;
static ino_t published_ino;
/*
 * The table stays open for the VMM's whole life (O_CLOEXEC): the tool
 * accepts a table only from a process that holds that very file open, so
 * a table left behind by a killed VMM never speaks for a later process
 * that got its pid (lib/memmap.h).
 */
static int published_fd = -1;
static int stale_removed;

void guest_ram_unpublish(void)
{
	struct stat st;

	if (published_name[0] &&
	    !fstatat(published_dirfd, published_name, &st, AT_SYMLINK_NOFOLLOW) &&
	    st.st_dev == published_dev && st.st_ino == published_ino)
		unlinkat(published_dirfd, published_name, 0);
	published_name[0] = 0;
}

/*
 * Create name (relative to dirfd, its directory, held open) for writing, never through a symlink and never opening a file that someone
 * else made: O_EXCL|O_NOFOLLOW, and mode exactly 0600 whatever the umask.
 * A --memmap file that exists is refused: it is not ours to replace. (In
 * the private directory memmap_clean_stale() has already removed an
 * earlier VMM's table with our pid.)
 */
static int create_table(int dirfd, const char *name, const char *path)
{
	int flags = O_CREAT | O_EXCL | O_NOFOLLOW | O_WRONLY | O_CLOEXEC;
	int fd = openat(dirfd, name, flags, 0600);

	if (fd < 0) {
		if (errno == EEXIST || errno == ELOOP)
			pr_err("cannot publish the memslot table: %s already exists%s: refusing "
			       "to write through it (remove it, or name another file)", path,
			       errno == ELOOP ? " as a symbolic link" : "");
		else
			pr_errno("cannot create %s", path);
		return -1;
	}
	if (fchmod(fd, 0600)) {
		pr_errno("chmod 0600 %s", path);
		close(fd);
		unlinkat(dirfd, name, 0);
		return -1;
	}
	return fd;
}

/*
 * flock() that gives up after FLOCK_TIMEOUT_MS: the lock is held by VMMs
 * only while they publish (or, a table's, never exclusively), so a holder
 * that keeps it longer is stuck or hostile, and must not hold this VMM's
 * start-up for ever. A stop asked meanwhile ends the wait at once (the
 * stop handler is SA_RESTART: no flock() would return for it). 0, or -1
 * with errno set (EWOULDBLOCK: timed out; EINTR: stopped).
 */
#define FLOCK_TIMEOUT_MS	5000
#define FLOCK_RETRY_MS		10

static int (*publish_stopped)(void);

static int flock_bounded(int fd, int op)
{
	struct timespec slice = { .tv_nsec = FLOCK_RETRY_MS * 1000000L };
	unsigned int waited;

	for (waited = 0;; waited += FLOCK_RETRY_MS) {
		if (!flock(fd, op | LOCK_NB))
			return 0;
		if ((errno != EWOULDBLOCK && errno != EINTR) || waited >= FLOCK_TIMEOUT_MS)
			return -1;
		if (publish_stopped && publish_stopped()) {
			errno = EINTR;
			return -1;
		}
		nanosleep(&slice, NULL);
	}
}

/* The table of vm's memslots, as the tools read it. */
static void table_of(const struct vm *vm, struct memmap *m)
{
	unsigned int i;

	*m = (struct memmap) { .pid = getpid(), .start = proc_start_time(0) };
	for (i = 0; i < vm->mem.count && i < MEMMAP_MAX_SLOTS; i++) {
		const struct memslot *s = &vm->mem.slots[i];

		m->slots[i] = (struct memmap_slot) {
			.id = s->id, .gpa = s->gpa, .size = s->size, .hva = (uintptr_t)s->hva,
		};
		snprintf(m->slots[i].backing, sizeof(m->slots[i].backing), "%s",
			 memslot_backing_name(s->backing));
	}
	m->count = i;
}

/*
 * The private directory, checked and open, with stale tables removed
 * under its lock (held until the caller has published: a VMM cleaning up
 * never sees another's table half made). Without --memmap it must be
 * usable; with --memmap it is only cleaned if it is there and sound.
 */
static int open_private_dir(int required)
{
	char dir[64], err[256];
	int dirfd;

	memmap_default_dir(dir, sizeof(dir), geteuid());
	if (!required && access(dir, F_OK))
		return -1;
	dirfd = memmap_private_dir(dir, err, sizeof(err));
	if (dirfd < 0) {
		if (required)
			pr_err("cannot publish the memslot table: %s", err);
		return -1;
	}
	if (flock_bounded(dirfd, LOCK_EX)) {
		if (errno == EINTR)
			pr_err("flock %s: stopped while another process held it", dir);
		else if (errno == EWOULDBLOCK)
			pr_err("flock %s: another process held it for %d s", dir,
			       FLOCK_TIMEOUT_MS / 1000);
		else
			pr_errno("flock %s", dir);
		close(dirfd);
		return -1;
	}
	stale_removed = memmap_clean_stale(dirfd, err, sizeof(err));
	if (stale_removed < 0) {
		pr_warn("%s: %s", dir, err);
		stale_removed = 0;
	}
	return dirfd;
}

int guest_ram_publish(const struct vm *vm, const char *path, int (*stopped)(void))
{
	static struct memmap m;
	char name[32], where[PATH_MAX];
	const char *base = name;
	struct stat st;
	FILE *f;
	int privfd, dirfd = -1, fd = -1, r;

	publish_stopped = stopped;
	/* first: a table that cannot be tied to this process is not published */
	table_of(vm, &m);
	if (!m.start) {
		pr_err("cannot read this process's start time (/proc/self/stat): the memslot "
		       "table could not name its writer, not publishing it");
		return -1;
	}
	privfd = open_private_dir(!path);
	if (!path && privfd < 0)
		return -1;
	if (!path) {
		memmap_default_path(where, sizeof(where), getpid(), geteuid());
		snprintf(name, sizeof(name), HWLAB_MEMMAP_FILE, (int)getpid());
		/* a descriptor of its own: closing privfd must release the lock */
		dirfd = openat(privfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	} else if (snprintf(where, sizeof(where), "%s", path) >= (int)sizeof(where)) {
		errno = ENAMETOOLONG;
	} else {
		dirfd = path_open_parent(path, &base);
	}
	if (dirfd < 0)
		pr_errno("cannot publish the memslot table %s: its directory", path ? path : where);
	else
		fd = create_table(dirfd, base, where);
	if (privfd >= 0)
		close(privfd);	/* and with it the lock */
	if (fd >= 0 && fstat(fd, &st)) {
		pr_errno("fstat %s", where);
		close(fd);
		unlinkat(dirfd, base, 0);
		fd = -1;
	}
	if (fd < 0) {
		/* never set: a file that was not ours is never removed */
		if (dirfd >= 0)
			close(dirfd);
		return -1;
	}
	snprintf(published, sizeof(published), "%s", where);
	published_dirfd = dirfd;
	published_dev = st.st_dev;
	published_ino = st.st_ino;
	snprintf(published_name, sizeof(published_name), "%s", base);
	/* from here every exit removes it: return from main, exit(), die() */
	atexit(guest_ram_unpublish);
	/*
	 * Held for the VMM's life: another VMM's --console refuses a file
	 * someone holds a lock on, so guest output is never appended to a
	 * live table wherever it was published (console_io.c).
	 */
	if (flock_bounded(fd, LOCK_SH))
		pr_warn("flock %s: %s", where, strerror(errno));
	/* the FILE writes through a duplicate; fd stays open for the VMM's life */
	r = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	f = r < 0 ? NULL : fdopen(r, "w");
	if (!f) {
		pr_errno("fdopen %s", published);
		if (r >= 0)
			close(r);
		close(fd);
		guest_ram_unpublish();
		return -1;
	}
	r = memmap_write(f, &m);
	if (fclose(f))
		r = -1;
	if (r) {
		pr_errno("writing %s", published);
		close(fd);
		guest_ram_unpublish();
		return -1;
	}
	published_fd = fd;
	return 0;
}

const char *guest_ram_published_path(void)
{
	return published;
}

unsigned int guest_ram_stale_removed(void)
{
	return stale_removed;
}
