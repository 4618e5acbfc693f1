// SPDX-License-Identifier: GPL-2.0
/*
 * A memslot table against the mappings of its process (lib/memmap.h), as
 * /proc/PID/maps and smaps show them: every slot inside guest RAM, and, for
 * a page of a shared file, no other process holding that file. Both read
 * maps lines, so they share this file's line reader.
 */
#include "memmap.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "parse_num.h"

/* One mapping of /proc/PID/maps or /proc/PID/smaps. */
struct vma {
	uint64_t lo, hi;
	char perms[8];
	unsigned long inode;
	char path[512];
	int hugetlb;		/* smaps' VmFlags has "ht" */
	int dontdump;		/* and "dd" (MADV_DONTDUMP) */
};

/*
 * Guest RAM is private and writable: not a shared mapping such as a
 * vCPU's kvm_run, not the VMM's text or a file's page cache such as its
 * data segment. QEMU's (RAM_RULE_QEMU) is a private anonymous mapping or a
 * private hugetlb one: MAP_HUGETLB (which maps shows as "/anon_hugepage
 * (deleted)") or a private mapping of a hugetlbfs file, as QEMU's
 * memory-backend-file makes for a libvirt guest with <hugepages/> (smaps'
 * VmFlags say "ht"; the pages the guest wrote are its own, copied on
 * write). An unnamed anonymous mapping is also a static VMM's .bss, a
 * thread's stack, a malloc arena: hwlab-vmm marks its guest RAM so that
 * none of those passes for it (lib/memmap.h).
 */
static int guest_ram(const struct vma *v, enum guest_ram_rule rule, const char *backing)
{
	int anon = !v->inode && !v->path[0];
	int anon_huge = !strcmp(v->path, "/anon_hugepage (deleted)");
	/*
	 * hwlab-vmm's --backing hugetlb-shared and shmem: its own memfd
	 * (hugetlbfs or tmpfs), mapped shared so that the file holds the
	 * guest's data (a poisoned huge page's healthy rest is read back from
	 * it; a poisoned shmem page is punched out of it). Shared, but by name
	 * and kind only this: a memfd the VMM named, marked "dd", hugetlb for
	 * a hugetlb-shared slot and not for a shmem one. Its pages are file
	 * pages: page_classify_ram() still wants each of the slot's kind and
	 * mapped by the VMM alone.
	 */
	int hwlab_memfd = v->dontdump &&
			  !strcmp(v->path, "/memfd:" HWLAB_GUEST_RAM_NAME " (deleted)") &&
			  (v->hugetlb ? !strcmp(backing, "hugetlb-shared") : !strcmp(backing, "shmem"));

	if (v->perms[1] != 'w')
		return 0;
	if (v->perms[3] == 's')
		return rule != RAM_RULE_QEMU && hwlab_memfd;
	if (v->perms[3] != 'p')
		return 0;
	switch (rule) {
	case RAM_RULE_QEMU:
		return anon || anon_huge || v->hugetlb;
	case RAM_RULE_HWLAB:
		return v->dontdump && (anon || (anon_huge && v->hugetlb));
	case RAM_RULE_HWLAB_NAMED:
		return v->dontdump && ((!v->inode && !strcmp(v->path, "[anon:"
							    HWLAB_GUEST_RAM_NAME "]")) ||
				       (anon_huge && v->hugetlb));
	}
	return 0;
}

/* fgets, and the rest of a line longer than the buffer thrown away */
static char *read_line(FILE *f, char *line, size_t len)
{
	char rest[512];

	if (!fgets(line, (int)len, f))
		return NULL;
	if (!strchr(line, '\n'))
		while (fgets(rest, sizeof(rest), f) && !strchr(rest, '\n'))
			;
	return line;
}

/* One line of /proc/PID/maps, or the first of a mapping in smaps. */
struct maps_line {
	uint64_t lo, hi, offset, maj, min, inode;
	char perms[5];
	const char *path;	/* inside the line, path_len bytes; empty when none */
	size_t path_len;
};

/* the next field at *p, after blanks, to the next blank or newline; *p past it */
static const char *next_field(const char **p, size_t *len)
{
	const char *f = *p + strspn(*p, " \t");

	*len = strcspn(f, " \t\n");
	*p = f + *len;
	return f;
}

/* "A<sep>B" in the len bytes at f, both hex as the kernel writes them */
static int hex_pair(const char *f, size_t len, char sep, uint64_t max, uint64_t *a, uint64_t *b)
{
	const char *at = memchr(f, sep, len);

	return !at || parse_field_u64(f, (size_t)(at - f), 16, max, a) ||
	       parse_field_u64(at + 1, len - (size_t)(at + 1 - f), 16, max, b) ? -1 : 0;
}

/*
 * "lo-hi perms offset MAJ:MIN INODE [path]": every number in the kernel's
 * own spelling (lib/parse_num.h: hex, zero-padded, or decimal; no sign,
 * prefix or overflow, which scanf's %x and %lu took); else -1.
 */
static int parse_maps_line(const char *line, struct maps_line *ml)
{
	const char *p = line, *f;
	size_t len;

	f = next_field(&p, &len);
	if (hex_pair(f, len, '-', UINT64_MAX, &ml->lo, &ml->hi))
		return -1;
	f = next_field(&p, &len);
	if (len != 4)
		return -1;
	memcpy(ml->perms, f, 4);
	ml->perms[4] = 0;
	f = next_field(&p, &len);
	if (parse_field_u64(f, len, 16, UINT64_MAX, &ml->offset))
		return -1;
	f = next_field(&p, &len);
	if (hex_pair(f, len, ':', UINT32_MAX, &ml->maj, &ml->min))
		return -1;
	f = next_field(&p, &len);
	if (parse_field_u64(f, len, 10, UINT64_MAX, &ml->inode))
		return -1;
	ml->path = p + strspn(p, " \t\n");
	ml->path_len = strcspn(ml->path, "\n");
	return 0;
}

/* a mapping's first line: "lo-hi perms offset dev inode [path]"; else -1 */
static int parse_vma(const char *line, struct vma *v)
{
	struct maps_line ml;

	if (parse_maps_line(line, &ml))
		return -1;
	v->lo = ml.lo;
	v->hi = ml.hi;
	memcpy(v->perms, ml.perms, sizeof(ml.perms));
	v->inode = ml.inode;
	snprintf(v->path, sizeof(v->path), "%.*s", (int)ml.path_len, ml.path);
	v->hugetlb = v->dontdump = 0;
	return 0;
}

/* smaps' "VmFlags: rd wr ... ht": whether FLAG is one of them */
static int has_vm_flag(const char *flags, const char *flag)
{
	size_t len = strlen(flag);
	const char *p;

	for (p = strstr(flags, flag); p; p = strstr(p + 1, flag))
		if (p[-1] == ' ' && (p[len] == ' ' || p[len] == '\n' || !p[len]))
			return 1;
	return 0;
}

/* Do the table's slots, together, cover [lo, hi) without a gap? */
static int slots_cover(const struct memmap *m, uint64_t lo, uint64_t hi)
{
	unsigned int i, again = 1;

	while (lo < hi && again)
		for (i = 0, again = 0; i < m->count; i++)
			if (m->slots[i].hva <= lo && lo - m->slots[i].hva < m->slots[i].size) {
				lo = m->slots[i].hva + m->slots[i].size;
				again = 1;
			}
	return lo >= hi;
}

/*
 * Walk maps or smaps (ascending, as the kernel writes them) from start and
 * say whether guest-RAM mappings cover [start, end) without a gap. A line
 * that is neither a mapping nor an smaps "Key: value" under one refuses.
 * For hwlab-vmm's marked RAM, every mapping a slot touches must also lie
 * wholly inside the table's slots: the VMM maps its RAM and nothing else
 * that way, so a slot that is a page of a larger marked mapping is not
 * guest RAM (an ASan build's shadow memory is MADV_DONTDUMP too, and a
 * table pointing into it passed where the kernel cannot name mappings).
 */
static int ram_covered(FILE *maps, const struct memmap *m, uint64_t start, uint64_t end,
		       enum guest_ram_rule rule, const char *backing)
{
	char line[512];
	struct vma v, next;
	int have = 0, eof;
	uint64_t at = start;

	rewind(maps);
	for (;;) {
		eof = !read_line(maps, line, sizeof(line));
		if (!eof && parse_vma(line, &next)) {
			if (!have || !isalpha((unsigned char)line[0]) || !strchr(line, ':'))
				return 0;
			if (!strncmp(line, "VmFlags:", 8)) {
				v.hugetlb = has_vm_flag(line + 8, "ht");
				v.dontdump = has_vm_flag(line + 8, "dd");
			}
			continue;
		}
		/* the mapping before this line has all its attributes: judge it */
		if (have && v.hi > at) {
			if (v.lo > at || !guest_ram(&v, rule, backing) ||
			    (rule != RAM_RULE_QEMU && !slots_cover(m, v.lo, v.hi)))
				return 0;
			at = v.hi;
			if (at >= end)
				return 1;
		}
		if (eof)
			return at >= end;
		v = next;
		have = 1;
	}
}

int memmap_check_maps(const struct memmap *m, FILE *maps, enum guest_ram_rule rule, char *err,
		      size_t errlen)
{
	static const char *const what[] = {
		[RAM_RULE_QEMU] = "private anonymous writable mappings",
		[RAM_RULE_HWLAB] = "guest RAM (private writable mappings hwlab-vmm marked: "
				   "VmFlags dd, each wholly inside the table's slots)",
		[RAM_RULE_HWLAB_NAMED] = "guest RAM (private writable mappings hwlab-vmm "
					 "marked: VmFlags dd, named [anon:" HWLAB_GUEST_RAM_NAME
					 "] unless hugetlb, each wholly inside the table's slots)",
	};
	unsigned int i;

	for (i = 0; i < m->count; i++) {
		const struct memmap_slot *s = &m->slots[i];

		if (!ram_covered(maps, m, s->hva, s->hva + s->size, rule, s->backing)) {
			snprintf(err, errlen, "slot %u: hva [%#" PRIx64 ", %#" PRIx64 ") is not "
				 "inside %s of pid %d", s->id, s->hva, s->hva + s->size, what[rule],
				 (int)m->pid);
			return -1;
		}
	}
	return 0;
}

/* "lo-hi perms offset MAJ:MIN INODE": the file (dev, inode) a maps line maps */
static int maps_line_file(const char *line, uint64_t *lo, uint64_t *hi, dev_t *dev, ino_t *ino)
{
	struct maps_line ml;

	if (parse_maps_line(line, &ml))
		return -1;
	*lo = ml.lo;
	*hi = ml.hi;
	*dev = makedev((unsigned int)ml.maj, (unsigned int)ml.min);
	*ino = ml.inode;
	return 0;
}

/* does /proc/N (pdir) hold (dev, ino) in an fd or a mapping? */
static int proc_holds(int pdir, dev_t dev, ino_t ino)
{
	char line[512];
	struct dirent *de;
	struct stat st;
	uint64_t lo, hi;
	dev_t d;
	ino_t i;
	int fd, held = 0;
	DIR *fds;
	FILE *maps;

	fd = openat(pdir, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	fds = fd < 0 ? NULL : fdopendir(fd);
	if (!fds && fd >= 0)
		close(fd);
	while (fds && !held && (de = readdir(fds))) {
		if (de->d_name[0] == '.')
			continue;
		/* the magic link leads to the open file itself, whatever its path */
		held = !fstatat(dirfd(fds), de->d_name, &st, 0) && st.st_dev == dev &&
		       st.st_ino == ino;
	}
	if (fds)
		closedir(fds);
	fd = held ? -1 : openat(pdir, "maps", O_RDONLY | O_CLOEXEC);
	maps = fd < 0 ? NULL : fdopen(fd, "r");
	if (!maps && fd >= 0)
		close(fd);
	while (maps && !held && read_line(maps, line, sizeof(line)))
		held = !maps_line_file(line, &lo, &hi, &d, &i) && d == dev && i == ino && ino;
	if (maps)
		fclose(maps);
	return held;
}

int memmap_file_held_elsewhere(pid_t pid, uint64_t hva, pid_t *holder, char *err, size_t errlen)
{
	char path[64], line[512];
	uint64_t lo, hi;
	dev_t dev = 0;
	ino_t ino = 0;
	struct dirent *de;
	FILE *maps;
	DIR *proc;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	maps = fopen(path, "re");
	if (!maps) {
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	while (!found && read_line(maps, line, sizeof(line)))
		found = !maps_line_file(line, &lo, &hi, &dev, &ino) && hva >= lo && hva < hi;
	fclose(maps);
	if (!found || !ino) {
		snprintf(err, errlen, "hva %#" PRIx64 " is not in a file mapping of pid %d", hva,
			 (int)pid);
		return -1;
	}
	proc = opendir("/proc");
	if (!proc) {
		snprintf(err, errlen, "cannot read /proc: %s", strerror(errno));
		return -1;
	}
	while ((de = readdir(proc))) {
		uint64_t n;
		int pfd;

		/* a process's directory: its pid, in decimal (not "self", not "1x") */
		if (parse_field_u64(de->d_name, strlen(de->d_name), 10, INT_MAX, &n) || !n ||
		    n == (uint64_t)pid)
			continue;
		pfd = openat(dirfd(proc), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (pfd < 0)
			continue;	/* gone meanwhile */
		if (proc_holds(pfd, dev, ino)) {
			*holder = (pid_t)n;
			close(pfd);
			closedir(proc);
			return 1;
		}
		close(pfd);
	}
	closedir(proc);
	return 0;
}
