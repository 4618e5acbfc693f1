// SPDX-License-Identifier: GPL-2.0
#include "memmap.h"

#include <inttypes.h>
#include <string.h>

void memmap_default_path(char *buf, size_t len, pid_t pid)
{
	snprintf(buf, len, HWLAB_MEMMAP_FMT, (int)pid);
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

int memmap_read(FILE *f, struct memmap *m, char *err, size_t errlen)
{
	char line[256];
	unsigned int lineno = 0;

	memset(m, 0, sizeof(*m));
	while (fgets(line, sizeof(line), f)) {
		struct memmap_slot *s = &m->slots[m->count];
		int pid;

		lineno++;
		if (sscanf(line, "# pid %d", &pid) == 1) {
			m->pid = pid;
			continue;
		}
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (m->count == MEMMAP_MAX_SLOTS) {
			snprintf(err, errlen, "more than %d slots", MEMMAP_MAX_SLOTS);
			return -1;
		}
		if (sscanf(line, "%u %" SCNx64 " %" SCNx64 " %" SCNx64 " %15s", &s->id, &s->gpa,
			   &s->size, &s->hva, s->backing) != 5 || !s->size) {
			snprintf(err, errlen, "line %u is not 'slot gpa size hva backing'", lineno);
			return -1;
		}
		m->count++;
	}
	if (ferror(f)) {
		snprintf(err, errlen, "read error");
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
