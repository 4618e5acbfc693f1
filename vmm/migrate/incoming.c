// SPDX-License-Identifier: GPL-2.0
/*
 * --incoming unix:PATH, the destination's side of a migration
 * (migrate/migration.h): the listening socket made and removed relative to
 * its directory's fd, one source taken, the stream restored and answered.
 * Every wait on the source (accept, the header, a section, the hand-over)
 * is bounded and asks the stop question (migrate/stream.h).
 */
#define _GNU_SOURCE
#include "migrate/migration.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "clock.h"
#include "core/report.h"
#include "log.h"
#include "migrate/stream.h"
#include "path.h"

/*
 * bind() has no *at variant: the socket is made through the directory fd's
 * /proc/self/fd link, which names the directory opened (and checked), not
 * whatever its path leads to by now.
 */
int migration_listen(const char *to, struct migration_listener *l)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	const char *name;
	struct stat st;
	int n;

	*l = (struct migration_listener) { .fd = -1, .dirfd = -1 };
	if (strncmp(to, "unix:", 5) || !to[5]) {
		pr_err("a migration address is unix:PATH, not '%s'", to);
		return -1;
	}
	l->dirfd = path_open_parent(to + 5, &name);
	if (l->dirfd < 0) {
		pr_errno("--incoming: listening on %s: its directory", to);
		return -1;
	}
	n = snprintf(addr.sun_path, sizeof(addr.sun_path), "/proc/self/fd/%d/%s", l->dirfd, name);
	if (!*name || n >= (int)sizeof(addr.sun_path)) {
		pr_err("--incoming: listening on %s: the socket's name (its last component) must "
		       "be 1 to %d bytes", to, (int)sizeof(addr.sun_path) - 1 - (n - (int)strlen(name)));
		goto fail;
	}
	snprintf(l->name, sizeof(l->name), "%s", name);
	l->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	/* bind() makes a new socket file, and fails on anything already there (a planted link) */
	if (l->fd < 0 || bind(l->fd, (struct sockaddr *)&addr, sizeof(addr))) {
		pr_errno("--incoming: listening on %s", to);
		goto fail;
	}
	/* what is ours to remove at the end: this file, not whatever has the name then */
	if (fstatat(l->dirfd, l->name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISSOCK(st.st_mode)) {
		pr_err("--incoming: listening on %s: the socket file was replaced at once", to);
		goto fail;
	}
	l->dev = st.st_dev;
	l->ino = st.st_ino;
	l->bound = 1;
	if (listen(l->fd, 1)) {
		pr_errno("--incoming: listening on %s", to);
		goto fail;
	}
	return 0;
fail:
	migration_unlink(l);
	return -1;
}

int migration_accept(struct migration_listener *l, int (*stopped)(void))
{
	struct pollfd p = { .fd = l->fd, .events = POLLIN };
	int conn;

	for (;;) {
		if (stopped()) {
			pr_err("--incoming: stopped before a source came");
			return -1;
		}
		if (poll(&p, 1, STREAM_POLL_MS) <= 0)
			continue;
		conn = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC);
		if (conn >= 0)
			return conn;
		/* (a source that left between the poll and the accept: wait for another) */
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
		    errno != ECONNABORTED) {
			pr_errno("--incoming: accepting the source");
			return -1;
		}
	}
}

void migration_unlink(struct migration_listener *l)
{
	struct stat st;

	if (l->fd >= 0)
		close(l->fd);
	if (l->bound && !fstatat(l->dirfd, l->name, &st, AT_SYMLINK_NOFOLLOW) &&
	    st.st_dev == l->dev && st.st_ino == l->ino)
		unlinkat(l->dirfd, l->name, 0);
	if (l->dirfd >= 0)
		close(l->dirfd);
	*l = (struct migration_listener) { .fd = -1, .dirfd = -1 };
}

int migration_receive(struct vm *vm, int conn, const char *to, struct restore_result *r,
		      int (*stopped)(void))
{
	uint64_t t0 = monotonic_ns();
	char qto[512], ack, go = 0;
	struct stream s;
	int ret;

	json_escape(qto, sizeof(qto), to);
	ret = stream_in_socket(&s, conn, "the migration socket", stopped) ||
	      snapshot_restore_state(vm, &s, r) ? -1 : 0;
	ack = ret ? MIGRATE_ACK_REFUSED : MIGRATE_ACK_OK;
	if (stream_put_byte(&s, ack) && !ret) {
		pr_err("--incoming: answering the source failed");
		ret = -1;
	}
	/* the guest runs here only once the source has stopped it for good */
	if (!ret && (stream_get_byte(&s, &go, STREAM_IO_TIMEOUT_S * 1000) || go != MIGRATE_GO)) {
		pr_err("--incoming: the source did not hand the guest over (it runs it on)");
		ret = -1;
	}
	if (ret) {
		snapshot_report_refused("incoming", qto);
		return -1;
	}
	snapshot_report_restore("incoming", qto, r, monotonic_ns() - t0);
	return 0;
}
