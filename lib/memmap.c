// SPDX-License-Identifier: GPL-2.0
#include "memmap.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
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

	if (mkdir(dir, 0700) && errno != EEXIST) {
		snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
		return -1;
	}
	/* lstat: a symlink planted here could point into someone else's directory */
	if (lstat(dir, &st)) {
		snprintf(err, errlen, "cannot stat %s: %s", dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s is not a directory (%s): refusing to publish there", dir,
			 S_ISLNK(st.st_mode) ? "a symbolic link" : "another kind of file");
		return -1;
	}
	if (st.st_uid != geteuid()) {
		snprintf(err, errlen, "%s is owned by uid %u, not by this process's uid %u: "
			 "refusing to publish there", dir, (unsigned int)st.st_uid,
			 (unsigned int)geteuid());
		return -1;
	}
	if ((st.st_mode & 0777) != 0700) {
		snprintf(err, errlen, "%s has mode %04o, not 0700: refusing to publish there",
			 dir, (unsigned int)(st.st_mode & 07777));
		return -1;
	}
	return 0;
}

int memmap_write(FILE *f, const struct memmap *m)
{
	unsigned int i;

	fprintf(f, "# pid %d\n# slot gpa size hva backing\n", (int)m->pid);
	for (i = 0; i < m->count; i++) {
		const struct memmap_slot *s = &m->slots[i];

		fprintf(f, "%u %#" PRIx64 " %#" PRIx64 " %#" PRIx64 " %s\n", s->id, s->gpa, s->size,
			s->hva, s->backing);
	}
	return fflush(f) || ferror(f) ? -1 : 0;
}

/* "# pid N": 1 if line is the header (then *pid is set, or err says why), else 0. */
static int parse_header(char *line, pid_t *pid, char *err, size_t errlen, unsigned int lineno)
{
	static const char prefix[] = "# pid ";
	uint64_t v;

	if (strncmp(line, prefix, sizeof(prefix) - 1))
		return 0;
	if (parse_u64(line + sizeof(prefix) - 1, HWLAB_PID_MAX, &v) || !v) {
		snprintf(err, errlen, "line %u: '%s' is not a pid (1..%d)", lineno,
			 line + sizeof(prefix) - 1, HWLAB_PID_MAX);
		return -1;
	}
	*pid = v;
	return 1;
}

/* One of the names memmap_write() writes. */
static int known_backing(const char *s)
{
	return !strcmp(s, "anon") || !strcmp(s, "thp") || !strcmp(s, "hugetlb");
}

/*
 * "slot gpa size hva backing": exactly five fields, every number whole and
 * in range (parse_u64), no range that wraps past 2^64. sscanf() took
 * "4294967297" as 1 and ignored what followed the fifth field.
 */
static int parse_slot(char *line, struct memmap_slot *s)
{
	char *field[6], *save = NULL;
	uint64_t id;
	unsigned int n = 0;

	for (field[n] = strtok_r(line, " \t", &save); field[n] && n < 5;
	     field[++n] = strtok_r(NULL, " \t", &save))
		;
	if (n != 5 || field[5] || parse_u64(field[0], UINT32_MAX, &id) ||
	    parse_u64(field[1], UINT64_MAX, &s->gpa) || parse_u64(field[2], UINT64_MAX, &s->size) ||
	    parse_u64(field[3], UINT64_MAX, &s->hva) || !known_backing(field[4]))
		return -1;
	if (!s->size || s->gpa + s->size < s->gpa || s->hva + s->size < s->hva)
		return -1;
	s->id = id;
	snprintf(s->backing, sizeof(s->backing), "%s", field[4]);
	return 0;
}

static int overlaps(const struct memmap *m, const struct memmap_slot *s)
{
	unsigned int i;

	for (i = 0; i < m->count; i++)
		if (s->gpa < m->slots[i].gpa + m->slots[i].size &&
		    m->slots[i].gpa < s->gpa + s->size)
			return 1;
	return 0;
}

int memmap_read(FILE *f, struct memmap *m, char *err, size_t errlen)
{
	char line[256];
	unsigned int lineno = 0;
	int r;

	memset(m, 0, sizeof(*m));
	while (fgets(line, sizeof(line), f)) {
		struct memmap_slot *s = &m->slots[m->count];
		size_t len = strlen(line);

		lineno++;
		if (len && line[len - 1] == '\n')
			line[--len] = 0;
		else if (!feof(f)) {
			snprintf(err, errlen, "line %u is longer than %zu characters", lineno,
				 sizeof(line) - 2);
			return -1;
		}
		if (m->pid && !strncmp(line, "# pid ", 6)) {
			snprintf(err, errlen, "line %u: a second pid header", lineno);
			return -1;
		}
		r = parse_header(line, &m->pid, err, errlen, lineno);
		if (r < 0)
			return -1;
		if (r || line[0] == '#' || !line[0])
			continue;
		if (m->count == MEMMAP_MAX_SLOTS) {
			snprintf(err, errlen, "line %u: more than %d slots", lineno, MEMMAP_MAX_SLOTS);
			return -1;
		}
		if (parse_slot(line, s)) {
			snprintf(err, errlen, "line %u is not 'slot gpa size hva backing' "
				 "(whole numbers, size > 0, no range past 2^64, backing "
				 "anon|thp|hugetlb)", lineno);
			return -1;
		}
		if (overlaps(m, s)) {
			snprintf(err, errlen, "line %u: slot overlaps an earlier one", lineno);
			return -1;
		}
		m->count++;
	}
	if (ferror(f)) {
		snprintf(err, errlen, "read error");
		return -1;
	}
	if (!m->pid) {
		snprintf(err, errlen, "no '# pid N' header");
		return -1;
	}
	if (!m->count) {
		snprintf(err, errlen, "no slot in it");
		return -1;
	}
	return 0;
}

/* One mapping of /proc/PID/maps or /proc/PID/smaps. */
struct vma {
	uint64_t lo, hi;
	char perms[8];
	unsigned long inode;
	char path[512];
	int hugetlb;		/* smaps' VmFlags has "ht" */
};

/*
 * Guest RAM: a private anonymous mapping, or a private hugetlb one:
 * MAP_HUGETLB (which maps shows as "/anon_hugepage (deleted)") or a private
 * mapping of a hugetlbfs file, as QEMU's memory-backend-file makes for a
 * libvirt guest with <hugepages/> (smaps' VmFlags say "ht"; the pages the
 * guest wrote are its own, copied on write). Not a file of any other kind,
 * not a shared mapping such as a vCPU's kvm_run, not the VMM's own data
 * segment.
 */
static int guest_ram(const struct vma *v)
{
	return v->perms[1] == 'w' && v->perms[3] == 'p' &&
	       ((!v->inode && !v->path[0]) || !strcmp(v->path, "/anon_hugepage (deleted)") ||
		v->hugetlb);
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

/* a mapping's first line: "lo-hi perms offset dev inode [path]"; else -1 */
static int parse_vma(const char *line, struct vma *v)
{
	int n = 0;

	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %*s %*s %lu %n", &v->lo, &v->hi, v->perms,
		   &v->inode, &n) != 4 || strlen(v->perms) < 4)
		return -1;
	snprintf(v->path, sizeof(v->path), "%s", line + n);
	v->path[strcspn(v->path, "\n")] = 0;
	v->hugetlb = 0;
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

/*
 * Walk maps or smaps (ascending, as the kernel writes them) from start and
 * say whether guest-RAM mappings cover [start, end) without a gap. A line
 * that is neither a mapping nor an smaps "Key: value" under one refuses.
 */
static int writable_covered(FILE *maps, uint64_t start, uint64_t end)
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
			if (!strncmp(line, "VmFlags:", 8) && has_vm_flag(line + 8, "ht"))
				v.hugetlb = 1;
			continue;
		}
		/* the mapping before this line has all its attributes: judge it */
		if (have && v.hi > at) {
			if (v.lo > at || !guest_ram(&v))
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

int memmap_check_maps(const struct memmap *m, FILE *maps, char *err, size_t errlen)
{
	unsigned int i;

	for (i = 0; i < m->count; i++) {
		const struct memmap_slot *s = &m->slots[i];

		if (!writable_covered(maps, s->hva, s->hva + s->size)) {
			snprintf(err, errlen, "slot %u: hva [%#" PRIx64 ", %#" PRIx64 ") is not "
				 "inside private anonymous writable mappings of pid %d", s->id, s->hva,
				 s->hva + s->size, (int)m->pid);
			return -1;
		}
	}
	return 0;
}

const struct memmap_slot *memmap_find_gpa(const struct memmap *m, uint64_t gpa)
{
	unsigned int i;

	for (i = 0; i < m->count; i++)
		if (gpa >= m->slots[i].gpa && gpa - m->slots[i].gpa < m->slots[i].size)
			return &m->slots[i];
	return NULL;
}
