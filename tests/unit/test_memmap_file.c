// SPDX-License-Identifier: GPL-2.0
/*
 * lib/memmap.c's file side: whose a table is (the writer's start time, the
 * process holding the very file open), the stale tables a VMM removes, the
 * private directory and the default path. The format and the checks of a
 * table's contents are test_lib.c's.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "memmap.h"
#include "unit.h"

/* /proc/PID/stat's field 22, after a command name with blanks and ')' in it. */
static void test_proc_start_time(void)
{
	unsigned long long t = 5;

	CHECK_EQ(proc_stat_start_time("42 (we) ird) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 "
				      "1 0 777 123 45\n", &t), 0);
	CHECK_EQ(t, 777);
	CHECK_EQ(proc_stat_start_time("42 (x) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 "
				      "888", &t), 0);
	CHECK_EQ(t, 888);
	CHECK_EQ(proc_stat_start_time("42 (x) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0",
				      &t), -1);
	CHECK_EQ(proc_stat_start_time("42 (x) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 "
				      "-1 0", &t), -1);
	CHECK_EQ(proc_stat_start_time("42 (x) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 "
				      "12x 0", &t), -1);
	CHECK_EQ(proc_stat_start_time("no parenthesis", &t), -1);
	CHECK(proc_start_time(0) && proc_start_time(0) == proc_start_time(getpid()),
	      "this process's start time, by self and by pid");
	CHECK_EQ(proc_start_time(HWLAB_PID_MAX + 1), 0);	/* no such process */
}

/* Only the process that holds the very file open holds it: not a copy, not a pid gone. */
static void test_memmap_held_by(void)
{
	char path[] = "/tmp/hwlab-unit-held.XXXXXX", err[200];
	struct stat st, other;
	int fd = mkstemp(path);

	if (fd < 0) {
		CHECK(0, "mkstemp: cannot test memmap_held_by");
		return;
	}
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK_EQ(memmap_held_by(getpid(), &st, err, sizeof(err)), 1);
	CHECK_EQ(stat("/", &other), 0);				/* not open here */
	CHECK_EQ(memmap_held_by(getpid(), &other, err, sizeof(err)), 0);
	CHECK_EQ(memmap_held_by(HWLAB_PID_MAX + 1, &st, err, sizeof(err)), -1);
	CHECK(strstr(err, "/fd") != NULL, "%s", err);
	close(fd);
	CHECK_EQ(memmap_held_by(getpid(), &st, err, sizeof(err)), 0);	/* closed: no more */
	unlink(path);
}

/* write NAME in dir: a table whose header says pid and start */
static void put_table(const char *dir, const char *name, const char *header)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f) {
		CHECK(0, "cannot write %s", path);
		return;
	}
	fprintf(f, "%s\n0 0 0x1000 0x7f0000000000 anon\n", header);
	fclose(f);
}

static int exists_in(const char *dir, const char *name)
{
	char path[128];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return !lstat(path, &st);
}

/*
 * memmap_clean_stale(): a table of this pid (an earlier VMM's), of a dead
 * pid, or of a live pid with another start time goes; a live process's
 * own table, one whose header cannot be read while its pid lives, and
 * anything that is not a regular N.memmap stays.
 */
static void test_memmap_clean_stale(void)
{
	char dir[] = "/tmp/hwlab-unit-stale.XXXXXX", err[200], name[64], hdr[96], path[128];
	pid_t alive, dead;
	int dirfd, status;
	const char *keep[] = { "notes.txt", "0123.memmap", "12.memmap.bak", "link.memmap" };
	unsigned int i;

	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp: cannot test memmap_clean_stale");
		return;
	}
	alive = fork();
	if (alive == 0) {
		pause();
		_exit(0);
	}
	dead = fork();
	if (dead == 0)
		_exit(0);
	waitpid(dead, &status, 0);

	snprintf(name, sizeof(name), "%d.memmap", (int)getpid());
	put_table(dir, name, "# pid 1 start 1");		/* ours: an earlier VMM's */
	snprintf(name, sizeof(name), "%d.memmap", (int)dead);
	put_table(dir, name, "# pid 1 start 1");		/* dead */
	snprintf(name, sizeof(name), "%d.memmap", (int)alive);
	snprintf(hdr, sizeof(hdr), "# pid %d start %llu", (int)alive, proc_start_time(alive));
	put_table(dir, name, hdr);				/* alive, its own: kept */
	snprintf(hdr, sizeof(hdr), "# pid 1 start %llu", proc_start_time(1) + 1);
	put_table(dir, "1.memmap", hdr);			/* pid reused: removed */
	snprintf(name, sizeof(name), "%d.memmap", (int)getppid());
	put_table(dir, name, "# pid 1");			/* alive, unreadable: kept */
	snprintf(path, sizeof(path), "%s/%d.memmap", dir, (int)dead + 100000);
	CHECK_EQ(symlink("/etc/passwd", path), 0);		/* a link: never removed */
	for (i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		put_table(dir, keep[i], "# pid 1 start 1");

	dirfd = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK_EQ(memmap_clean_stale(dirfd, err, sizeof(err)), 3);
	snprintf(name, sizeof(name), "%d.memmap", (int)getpid());
	CHECK(!exists_in(dir, name), "this pid's earlier table removed");
	snprintf(name, sizeof(name), "%d.memmap", (int)dead);
	CHECK(!exists_in(dir, name), "a dead pid's table removed");
	CHECK(!exists_in(dir, "1.memmap"), "a table whose start time is not pid 1's removed");
	snprintf(name, sizeof(name), "%d.memmap", (int)alive);
	CHECK(exists_in(dir, name), "a live process's own table kept");
	snprintf(name, sizeof(name), "%d.memmap", (int)getppid());
	CHECK(exists_in(dir, name), "a live pid's unreadable table kept");
	snprintf(name, sizeof(name), "%d.memmap", (int)dead + 100000);
	CHECK(exists_in(dir, name), "a symlink kept");
	for (i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		CHECK(exists_in(dir, keep[i]), "%s kept", keep[i]);
	close(dirfd);

	kill(alive, SIGKILL);
	waitpid(alive, &status, 0);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	CHECK_EQ(system(path), 0);
}

/* memmap_private_dir(): made 0700 when missing; a symlink or an open mode refused. */
static void test_memmap_private_dir(void)
{
	char base[] = "/tmp/hwlab-unit.XXXXXX", dir[64], link[64], err[200];
	struct stat st;
	int fd;

	if (!mkdtemp(base)) {
		CHECK(0, "mkdtemp: cannot test memmap_private_dir");
		return;
	}
	snprintf(dir, sizeof(dir), "%s/new", base);
	snprintf(link, sizeof(link), "%s/link", base);
	fd = memmap_private_dir(dir, err, sizeof(err));
	CHECK(fd >= 0, "%s", err);
	/* the fd is the directory checked */
	CHECK(!fstat(fd, &st) && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700,
	      "created mode 0700");
	close(fd);
	fd = memmap_private_dir(dir, err, sizeof(err));	/* again: ours, fine */
	CHECK(fd >= 0, "%s", err);
	close(fd);
	CHECK_EQ(symlink(dir, link), 0);
	CHECK_EQ(memmap_private_dir(link, err, sizeof(err)), -1);
	CHECK(strstr(err, "symbolic link") != NULL, "%s", err);
	CHECK_EQ(chmod(dir, 0755), 0);
	CHECK_EQ(memmap_private_dir(dir, err, sizeof(err)), -1);
	CHECK(strstr(err, "mode 0755, not 0700") != NULL, "%s", err);
	if (geteuid() == 0) {
		CHECK_EQ(chmod(dir, 0700), 0);
		CHECK_EQ(chown(dir, 65534, 65534), 0);
		CHECK_EQ(memmap_private_dir(dir, err, sizeof(err)), -1);
		CHECK(strstr(err, "owned by uid 65534") != NULL, "%s", err);
	}
	unlink(link);
	rmdir(dir);
	rmdir(base);
}

static void test_memmap_default_path(void)
{
	char path[64];

	memmap_default_path(path, sizeof(path), 1234, 0);
	CHECK(!strcmp(path, "/run/hwlab-vmm/1234.memmap"), "%s", path);
	memmap_default_path(path, sizeof(path), 1234, 1000);
	CHECK(!strcmp(path, "/tmp/hwlab-vmm-1000/1234.memmap"), "%s", path);
}

/*
 * A shared file mapping is the VMM's alone only while no other process
 * holds the file: a child with the fd open, then one with it mapped (not
 * touched), each found; none once they are gone.
 */
static void test_memmap_file_held_elsewhere(void)
{
	int fd = memfd_create("unit-held", MFD_CLOEXEC), go[2], r;
	char err[200], *p;
	pid_t child, holder = 0;
	int mode;

	CHECK(fd >= 0 && !ftruncate(fd, 4096), "a memfd");
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(p != MAP_FAILED, "mapped");
	p[0] = 1;
	CHECK_EQ(memmap_file_held_elsewhere(getpid(), (uintptr_t)p, &holder, err, sizeof(err)), 0);
	/* anonymous memory is not a file mapping: refused, said why */
	CHECK_EQ(memmap_file_held_elsewhere(getpid(), (uintptr_t)err, &holder, err, sizeof(err)),
		 -1);
	CHECK(strstr(err, "not in a file mapping") != NULL, "%s", err);
	for (mode = 0; mode < 2; mode++) {
		if (pipe(go))
			return;
		child = fork();
		if (child == 0) {
			char c;

			/* mode 0: the fd only; mode 1: a mapping only, never touched */
			if (mode == 1 && mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0) != MAP_FAILED)
				close(fd);
			munmap(p, 4096);
			close(go[1]);
			(void)!write(go[0], "", 0);
			(void)!read(go[0], &c, 1);
			_exit(0);
		}
		close(go[0]);
		/* the child unmapped our mapping; wait until it has (its maps say so) */
		for (r = 0; r < 2000; r++) {
			char path[64], line[512];
			FILE *f;
			int has = 0;

			snprintf(path, sizeof(path), "/proc/%d/maps", (int)child);
			f = fopen(path, "re");
			while (f && fgets(line, sizeof(line), f))
				has |= strtoull(line, NULL, 16) == (uintptr_t)p;
			if (f)
				fclose(f);
			if (!has)
				break;
			usleep(1000);
		}
		r = memmap_file_held_elsewhere(getpid(), (uintptr_t)p, &holder, err, sizeof(err));
		CHECK(r == 1 && holder == child, "mode %d: the child holding the file is found "
		      "(r %d, holder %d, child %d)", mode, r, (int)holder, (int)child);
		close(go[1]);
		waitpid(child, NULL, 0);
	}
	CHECK_EQ(memmap_file_held_elsewhere(getpid(), (uintptr_t)p, &holder, err, sizeof(err)), 0);
	munmap(p, 4096);
	close(fd);
}

UNIT_TEST(lib_memmap_file, "memslot table files (owner, stale tables, private directory)")
{
	test_memmap_file_held_elsewhere();
	test_proc_start_time();
	test_memmap_held_by();
	test_memmap_clean_stale();
	test_memmap_private_dir();
	test_memmap_default_path();
}
