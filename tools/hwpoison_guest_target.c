// SPDX-License-Identifier: GPL-2.0
/*
 * hwpoison-guest's first proof: the pid is the VMM it claims to be, and the
 * memslot table (or QEMU's answer for one page) is that very process's and
 * names only its guest RAM. Why each check is there: the header comment of
 * tools/hwpoison-guest.c and lib/memmap.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hwpoison_guest.h"
#include "log.h"
#include "memmap.h"
#include "qmp.h"

/* The uid that owns /proc/PID: the process's (effective) uid. */
uid_t target_owner_uid(pid_t pid)
{
	char path[32];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (stat(path, &st))
		die("pid %d: %s: %s", (int)pid, path, strerror(errno));
	return st.st_uid;
}

/*
 * A memslot table names hwlab-vmm's guest RAM, a QMP socket or a libvirt
 * domain a QEMU's; any other program is a wrong pid.
 */
void target_check_exe(const struct hwpoison_guest *g, pid_t pid)
{
	const char *want = g->target_exe;
	char path[32], exe[PATH_MAX];
	ssize_t n;
	const char *base;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n < 0)
		die("pid %d: cannot read %s: %s", (int)pid, path, strerror(errno));
	exe[n] = 0;
	base = strrchr(exe, '/');
	base = base ? base + 1 : exe;
	if (strcmp(base, want))
		die("pid %d is not a %s (it runs %s): refusing to poison it", (int)pid, want, exe);
}

/*
 * Right before each write: pid is still the process every check was made
 * on. In a long --soak the VMM may exit and its pid be reused by another
 * process, whose memory the next lookups would then describe.
 */
void target_check_same_process(const struct hwpoison_guest *g, pid_t pid)
{
	if (proc_start_time(pid) != g->vmm_start_time)
		die("pid %d is no longer the hwlab-vmm it was (it exited, or its pid was "
		    "reused): refusing to poison", (int)pid);
}

/*
 * Open the table as a file only its VMM could have written: not through a
 * symlink (O_NOFOLLOW), a regular file (O_NONBLOCK: a FIFO must not hang
 * us before fstat can refuse it), owned by the VMM's uid, which must be
 * root or ours, and writable by nobody else (mode 0600).
 */
static FILE *open_table(const char *path, pid_t pid, uid_t vmm_uid, struct stat *table)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	FILE *f;

	if (fd < 0 && errno == ELOOP)
		die("memslot table %s is a symbolic link: refusing to follow it", path);
	if (fd < 0)
		die("no memslot table %s for pid %d (%s): is it a running hwlab-vmm?", path,
		    (int)pid, strerror(errno));
	if (fstat(fd, &st))
		die("fstat %s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		die("memslot table %s is not a regular file: refusing it", path);
	if (st.st_uid != vmm_uid)
		die("memslot table %s is owned by uid %u, but pid %d runs as uid %u: not its "
		    "table, refusing it", path, (unsigned int)st.st_uid, (int)pid,
		    (unsigned int)vmm_uid);
	if (st.st_uid != 0 && st.st_uid != geteuid())
		die("memslot table %s is owned by uid %u, neither root nor us (uid %u): "
		    "refusing it", path, (unsigned int)st.st_uid, (unsigned int)geteuid());
	if ((st.st_mode & 07777) != 0600)
		die("memslot table %s has mode %04o, not 0600: others could have written it, "
		    "refusing it", path, (unsigned int)(st.st_mode & 07777));
	f = fdopen(fd, "r");
	if (!f)
		die("fdopen %s: %s", path, strerror(errno));
	*table = st;
	return f;
}

#ifndef PR_SET_VMA
#define PR_SET_VMA		0x53564d41
#define PR_SET_VMA_ANON_NAME	0
#endif

/*
 * Does this kernel name anonymous mappings (CONFIG_ANON_VMA_NAME)? Asked
 * of a page of our own: then hwlab-vmm's guest RAM must carry its name.
 */
static int kernel_names_anon_vmas(void)
{
	void *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int named;

	if (p == MAP_FAILED)
		die("mmap of a probe page: %s", strerror(errno));
	named = !prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)p, PAGE,
		       (unsigned long)"hwpoison-guest-probe");
	munmap(p, PAGE);
	return named;
}

/*
 * Every slot must be guest RAM of that very process (lib/memmap.h: which
 * mappings are, for hwlab-vmm and for QEMU). smaps rather than maps: its
 * VmFlags say "dd" (hwlab-vmm's mark) and "ht" (hugetlb, which tells
 * QEMU's private hugetlbfs file mapping for a libvirt <hugepages/> guest
 * from a private mapping of any other file).
 */
static void check_slots_mapped(const struct hwpoison_guest *g, const struct memmap *m,
			       const char *path, pid_t pid)
{
	char maps_path[32], err[300];
	enum guest_ram_rule rule = RAM_RULE_QEMU;
	FILE *maps;

	if (!strcmp(g->target_exe, "hwlab-vmm"))
		rule = kernel_names_anon_vmas() ? RAM_RULE_HWLAB_NAMED : RAM_RULE_HWLAB;
	snprintf(maps_path, sizeof(maps_path), "/proc/%d/smaps", (int)pid);
	maps = fopen(maps_path, "r");
	if (!maps)
		die("cannot read %s: %s", maps_path, strerror(errno));
	if (memmap_check_maps(m, maps, rule, err, sizeof(err)))
		die("memslot table %s does not match pid %d: %s", path, (int)pid, err);
	fclose(maps);
}

/*
 * The table must be the one the live process pid wrote and still holds
 * open (lib/memmap.h): a table left behind by a killed VMM, or a copy,
 * never speaks for a process that got its pid later.
 */
void target_check_table_held(const struct hwpoison_guest *g, pid_t pid)
{
	char err[128];
	int r;

	if (!g->table_path)
		return;
	r = memmap_held_by(pid, &g->table_st, err, sizeof(err));
	if (r < 0)
		die("pid %d: %s: cannot tell whether it holds memslot table %s (did it exit?): "
		    "refusing to poison", (int)pid, err, g->table_path);
	if (!r)
		die("memslot table %s is not open in pid %d: it is not the table that process "
		    "published (one left behind by an earlier process, or a copy): refusing it",
		    g->table_path, (int)pid);
}

/*
 * The table at path, trusted only as pid's: a file only its VMM could have
 * written, parsed strictly, its header naming that live process (pid and
 * start time), every slot inside its guest RAM, and the file held open by it.
 */
void target_read_table(struct hwpoison_guest *g, const char *path, pid_t pid, uid_t vmm_uid,
		       struct memmap *m)
{
	char err[256];
	/* never closed: open, its inode is not reused while the checks hold */
	FILE *f = open_table(path, pid, vmm_uid, &g->table_st);

	if (memmap_read(f, m, err, sizeof(err)))
		die("memslot table %s is malformed: %s", path, err);
	if (m->pid != pid)
		die("memslot table %s was written by pid %d, not %d: a stale table, refusing it",
		    path, (int)m->pid, (int)pid);
	if (m->start != g->vmm_start_time)
		die("memslot table %s was written by a pid %d that started at %llu, but pid %d "
		    "now is a process that started at %llu: a stale table of an earlier process, "
		    "refusing it", path, (int)pid, m->start, (int)pid, g->vmm_start_time);
	check_slots_mapped(g, m, path, pid);
	g->table_path = path;
	target_check_table_held(g, pid);
}

/*
 * QEMU's answer for one page (hva), as a one-slot table, checked like
 * hwlab-vmm's: the HVA must lie in a writable mapping of that very process.
 */
void target_qemu_page(const struct hwpoison_guest *g, pid_t pid, uint64_t page, uint64_t hva,
		      const char *source, struct memmap *m)
{
	*m = (struct memmap) { .pid = pid, .count = 1 };
	m->slots[0] = (struct memmap_slot) { .gpa = page, .size = PAGE, .hva = hva };
	strcpy(m->slots[0].backing, "qemu");
	check_slots_mapped(g, m, source, pid);
}

void target_read_qmp(const struct hwpoison_guest *g, pid_t pid, uint64_t gpa, struct memmap *m)
{
	char cmd[64], text[512], err[512];
	uint64_t page = gpa & ~(PAGE - 1), hva;

	snprintf(cmd, sizeof(cmd), "gpa2hva %#" PRIx64, page);
	if (qmp_hmp(g->opt.qmp_socket, cmd, text, sizeof(text), err, sizeof(err)))
		die("%s", err);
	if (qmp_parse_gpa2hva(text, page, &hva)) {
		text[strcspn(text, "\r\n")] = 0;
		die("QEMU pid %d has no RAM at GPA %#" PRIx64 ": '%s'", (int)pid, page, text);
	}
	target_qemu_page(g, pid, page, hva, g->opt.qmp_socket, m);
}
