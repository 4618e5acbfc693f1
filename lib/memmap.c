// SPDX-License-Identifier: GPL-2.0
#include "memmap.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
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

int memmap_write(FILE *f, const struct memmap *m)
{
	unsigned int i;

	fprintf(f, "# pid %d start %llu\n# slot gpa size hva backing\n", (int)m->pid, m->start);
	for (i = 0; i < m->count; i++) {
		const struct memmap_slot *s = &m->slots[i];

		fprintf(f, "%u %#" PRIx64 " %#" PRIx64 " %#" PRIx64 " %s\n", s->id, s->gpa, s->size,
			s->hva, s->backing);
	}
	return fflush(f) || ferror(f) ? -1 : 0;
}

/*
 * "# pid N start T": 1 if line is the header (then m->pid and m->start are
 * set, or err says why), else 0. Both numbers whole: a table without its
 * writer's start time cannot be tied to a process, so it is refused.
 */
static int parse_header(char *line, struct memmap *m, char *err, size_t errlen,
			unsigned int lineno)
{
	static const char prefix[] = "# pid ";
	char *pid = line + sizeof(prefix) - 1, *start;
	uint64_t v, t;

	if (strncmp(line, prefix, sizeof(prefix) - 1))
		return 0;
	start = strstr(pid, " start ");
	if (start)
		*start = 0;
	if (!start || parse_u64(pid, HWLAB_PID_MAX, &v) || !v ||
	    parse_u64(start + 7, UINT64_MAX, &t)) {
		if (start)
			*start = ' ';
		snprintf(err, errlen, "line %u: '%s' is not '# pid N start T' (N a pid 1..%d, "
			 "T its start time)", lineno, line, HWLAB_PID_MAX);
		return -1;
	}
	m->pid = v;
	m->start = t;
	return 1;
}

/* One of the names memmap_write() writes. */
static int known_backing(const char *s)
{
	return !strcmp(s, "anon") || !strcmp(s, "thp") || !strcmp(s, "hugetlb") ||
	       !strcmp(s, "hugetlb-1g") || !strcmp(s, "hugetlb-shared");
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
		r = parse_header(line, m, err, errlen, lineno);
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
				 "anon|thp|hugetlb|hugetlb-1g|hugetlb-shared)", lineno);
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
		snprintf(err, errlen, "no '# pid N start T' header");
		return -1;
	}
	if (!m->count) {
		snprintf(err, errlen, "no slot in it");
		return -1;
	}
	return 0;
}

int proc_stat_start_time(const char *stat, unsigned long long *start)
{
	/* after the command name, which may hold blanks and ')': field 3 on */
	const char *p = strrchr(stat, ')');
	unsigned int field;
	char *end;

	for (field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (!p || !isdigit((unsigned char)p[1]))
		return -1;
	errno = 0;
	*start = strtoull(p + 1, &end, 10);
	return errno || (*end != ' ' && *end != '\n' && *end) ? -1 : 0;
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
static int guest_ram(const struct vma *v, enum guest_ram_rule rule)
{
	int anon = !v->inode && !v->path[0];
	int anon_huge = !strcmp(v->path, "/anon_hugepage (deleted)");
	/*
	 * hwlab-vmm's --backing hugetlb-shared: its own hugetlbfs memfd,
	 * mapped shared so that the file holds the guest's data (a poisoned
	 * huge page's healthy rest is read back from it). Shared, but by name
	 * and kind only this: a memfd the VMM named, hugetlb, marked "dd". Its
	 * pages are file pages: page_classify_ram() still wants each mapped
	 * by the VMM alone.
	 */
	int hwlab_memfd = v->hugetlb && v->dontdump &&
			  !strcmp(v->path, "/memfd:" HWLAB_GUEST_RAM_NAME " (deleted)");

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

/* a mapping's first line: "lo-hi perms offset dev inode [path]"; else -1 */
static int parse_vma(const char *line, struct vma *v)
{
	int n = 0;

	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %*s %*s %lu %n", &v->lo, &v->hi, v->perms,
		   &v->inode, &n) != 4 || strlen(v->perms) < 4)
		return -1;
	snprintf(v->path, sizeof(v->path), "%s", line + n);
	v->path[strcspn(v->path, "\n")] = 0;
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
		       enum guest_ram_rule rule)
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
			if (v.lo > at || !guest_ram(&v, rule) ||
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

		if (!ram_covered(maps, m, s->hva, s->hva + s->size, rule)) {
			snprintf(err, errlen, "slot %u: hva [%#" PRIx64 ", %#" PRIx64 ") is not "
				 "inside %s of pid %d", s->id, s->hva, s->hva + s->size, what[rule],
				 (int)m->pid);
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

/* "lo-hi perms offset MAJ:MIN INODE": the file (dev, inode) a maps line maps */
static int maps_line_file(const char *line, uint64_t *lo, uint64_t *hi, dev_t *dev, ino_t *ino)
{
	unsigned int maj, min;
	unsigned long inode;

	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %*s %x:%x %lu", lo, hi, &maj, &min,
		   &inode) != 5)
		return -1;
	*dev = makedev(maj, min);
	*ino = inode;
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
		char *end;
		long n = strtol(de->d_name, &end, 10);
		int pfd;

		if (*end || n <= 0 || n == pid)
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
