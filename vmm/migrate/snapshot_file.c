// SPDX-License-Identifier: GPL-2.0
/*
 * The snapshot file's side of migrate/snapshot.h: --snapshot FILE written
 * through a new file beside it, made, renamed and removed relative to the
 * directory's fd; --restore FILE read only if it is a regular file (opened
 * without blocking, so a FIFO is refused instead of waited on).
 */
#define _GNU_SOURCE
#include "migrate/snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "core/report.h"
#include "core/vm.h"
#include "log.h"
#include "migrate/stream.h"
#include "path.h"

/* How long a pause may take to bring every vCPU out of KVM_RUN. */
#define PAUSE_TIMEOUT_NS	(5ULL * 1000 * 1000 * 1000)

int snapshot_take(struct vm *vm, const char *path)
{
	struct snapshot_stats st = { 0 };
	char tmp[NAME_MAX + 1], qpath[8192];
	const char *name;
	struct stream s;
	uint64_t t0;
	int dirfd, fd = -1, r;

	json_escape(qpath, sizeof(qpath), path);
	/* made, renamed and on failure removed in the directory opened now, whatever the path does */
	dirfd = path_open_parent(path, &name);
	if (dirfd < 0)
		pr_errno("--snapshot: the directory of %s", path);
	else if (!*name || snprintf(tmp, sizeof(tmp), "%s.tmp.%d", name, (int)getpid()) >=
		 (int)sizeof(tmp))
		pr_err("--snapshot: %s: its file name is empty or too long", path);
	else if ((fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			      0600)) < 0)
		pr_errno("--snapshot: creating %s beside %s", tmp, path);
	if (fd < 0) {
		if (dirfd >= 0)
			close(dirfd);
		report("snapshot", "\"status\":\"fail\",\"path\":\"%s\",\"reason\":\"cannot create "
		       "the file\"", qpath);
		return -1;
	}
	t0 = monotonic_ns();
	if (vm_pause(vm, PAUSE_TIMEOUT_NS)) {
		pr_err("--snapshot: a vCPU did not pause within %llu s", PAUSE_TIMEOUT_NS / 1000000000);
		r = -1;
	} else {
		r = stream_out_open(&s, fd, path) || snapshot_save_state(vm, &s, &st) ||
		    stream_out_close(&s) || fsync(fd) ? -1 : 0;
		vm_resume(vm);
		st.downtime_ns = monotonic_ns() - t0;
		st.bytes = s.wire_bytes;
		st.sections = s.sections;
	}
	if (close(fd) && !r) {
		pr_errno("--snapshot: closing %s", tmp);
		r = -1;
	}
	if (!r && renameat(dirfd, tmp, dirfd, name)) {
		pr_errno("--snapshot: renaming %s to %s", tmp, path);
		r = -1;
	}
	if (r) {
		unlinkat(dirfd, tmp, 0);
		close(dirfd);
		report("snapshot", "\"status\":\"fail\",\"path\":\"%s\",\"reason\":\"see the VMM's "
		       "error message\"", qpath);
		return -1;
	}
	close(dirfd);
	report("snapshot", "\"status\":\"ok\",\"path\":\"%s\",\"bytes\":%llu,\"sections\":%u,"
	       "\"pages_data\":%llu,\"pages_zero\":%llu,\"pages_poisoned\":%llu,"
	       "\"pages_unreadable\":%llu,\"poisoned_heard\":%u,\"poisoned_told\":%u,"
	       "\"downtime_ms\":%.1f", qpath, (unsigned long long)st.bytes, st.sections,
	       (unsigned long long)st.ram.pages[RAM_PAGE_DATA],
	       (unsigned long long)st.ram.pages[RAM_PAGE_ZERO],
	       (unsigned long long)st.ram.pages[RAM_PAGE_POISONED],
	       (unsigned long long)st.ram.pages[RAM_PAGE_UNREADABLE], st.poisoned_heard,
	       st.poisoned_told, st.downtime_ns / 1e6);
	return 0;
}

int snapshot_restore_file(struct vm *vm, const char *path, struct restore_result *r)
{
	uint64_t t0 = monotonic_ns();
	struct stream s;
	char qpath[8192];
	int fd, ret = -1;

	json_escape(qpath, sizeof(qpath), path);
	/*
	 * without waiting for a FIFO's writer, a regular file only, then
	 * blocking again: a file's stream has no stop question, and a file
	 * system that answers EAGAIN (FUSE, NFS) is to be waited on
	 */
	fd = path_open_regular(path, O_RDONLY | O_NOFOLLOW);
	if (fd < 0 && errno == EINVAL)
		pr_err("--restore: %s is not a regular file (a FIFO, socket, device or directory "
		       "is refused)", path);
	else if (fd < 0)
		pr_errno("--restore: opening %s", path);
	else if (!stream_in_open(&s, fd, path) && !snapshot_restore_state(vm, &s, r))
		ret = 0;
	if (fd >= 0)
		close(fd);
	if (ret) {
		snapshot_report_refused("restore", qpath);
		return -1;
	}
	snapshot_report_restore("restore", qpath, r, monotonic_ns() - t0);
	return 0;
}
