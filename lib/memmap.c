// SPDX-License-Identifier: GPL-2.0
/*
 * The memslot table's format (lib/memmap.h): the writer, the strict parser
 * and the lookup of a GPA's slot. Where tables live: memmap_dir.c; the
 * process behind one: memmap_proc.c; one checked against its process's
 * mappings: memmap_maps.c.
 */
#include "memmap.h"

#include <inttypes.h>
#include <string.h>

#include "parse_num.h"

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
	       !strcmp(s, "hugetlb-1g") || !strcmp(s, "hugetlb-shared") || !strcmp(s, "shmem");
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
				 "anon|thp|hugetlb|hugetlb-1g|hugetlb-shared|shmem)", lineno);
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

const struct memmap_slot *memmap_find_gpa(const struct memmap *m, uint64_t gpa)
{
	unsigned int i;

	for (i = 0; i < m->count; i++)
		if (gpa >= m->slots[i].gpa && gpa - m->slots[i].gpa < m->slots[i].size)
			return &m->slots[i];
	return NULL;
}
