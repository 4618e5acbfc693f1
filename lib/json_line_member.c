// SPDX-License-Identifier: GPL-2.0
/*
 * Finding a report line's top-level member (json_line.h): a wanted string
 * compared as its pieces are parsed, so that neither a name nor a value is
 * ever held whole; and json_line_member() / json_line_value(), the same
 * for a line in memory, an object's member or an array's element.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "json_line.h"
#include "json_line_internal.h"

void json_line_match_start(struct json_line_match *m)
{
	m->pos = 0;
	m->differs = 0;
	m->active = 1;
}

void json_line_match_feed(struct json_line_match *m, const char *p, size_t n)
{
	size_t have;

	if (!m->active || m->differs)
		return;
	have = strlen(m->want + m->pos);
	if (n > have || memcmp(m->want + m->pos, p, n))
		m->differs = 1;
	else
		m->pos += n;
}

int json_line_match_end(struct json_line_match *m)
{
	int equal = m->active && !m->differs && !m->want[m->pos];

	m->active = 0;
	return equal;
}

struct member_search {
	struct json_line_match name;	/* want NULL: an element, by its index */
	size_t index;
	size_t seen;	/* elements heard */
	const struct json_line *line;
	int in_value;	/* the wanted member's value is being heard */
	int type;	/* of the last occurrence's value */
	char *buf;
	size_t size;
	size_t len;	/* of the last occurrence's value, whole */
	int found;
};

static void search_name(void *ctx)
{
	struct member_search *s = ctx;

	json_line_match_start(&s->name);
}

static void search_value(void *ctx)
{
	struct member_search *s = ctx;

	if (s->name.want)
		s->in_value = json_line_match_end(&s->name);
	else
		s->in_value = s->seen++ == s->index;
	if (s->in_value) {
		s->found = 1;
		s->len = 0;	/* a duplicate: the last one counts */
	}
}

static void search_end(void *ctx)
{
	struct member_search *s = ctx;

	if (s->in_value)
		s->type = s->line->type;
	s->in_value = 0;
}

static void search_bytes(void *ctx, const char *p, size_t n)
{
	struct member_search *s = ctx;
	size_t room;

	json_line_match_feed(&s->name, p, n);
	if (!s->in_value)
		return;
	if (s->size && s->len < s->size - 1) {
		room = s->size - 1 - s->len;
		memcpy(s->buf + s->len, p, n < room ? n : room);
	}
	s->len += n;
}

ssize_t json_line_member(const char *line, const char *name, char *buf, size_t size,
			 char *why, size_t whysize)
{
	return json_line_value(line, name, 0, NULL, buf, size, why, whysize);
}

ssize_t json_line_value(const char *line, const char *name, size_t index,
			enum json_line_type *type, char *buf, size_t size, char *why,
			size_t whysize)
{
	struct json_line l;
	struct member_search s = {
		.name.want = name, .index = index, .line = &l, .buf = buf, .size = size,
	};
	const struct json_line_hooks hooks = {
		.member_name = search_name, .member_value = search_value,
		.member_end = search_end, .bytes = search_bytes, .ctx = &s,
	};
	FILE *in;
	int kind;

	if (why && whysize)
		why[0] = 0;
	if (!*line)
		return -1;	/* no line: and fmemopen() may refuse 0 bytes */
	/* a stream over the line: the parser reads as json-field's files are read */
	in = fmemopen((void *)line, strlen(line), "r");
	if (!in) {
		if (why && whysize)
			snprintf(why, whysize, "cannot read the line: out of memory");
		return -2;
	}
	kind = json_line__read(&l, in, &hooks, name ? '{' : '[');
	fclose(in);
	if (kind == JSON_LINE_MALFORMED) {
		if (why && whysize)
			snprintf(why, whysize, "%s", l.why);
		return -2;
	}
	if (kind != JSON_LINE_REPORT || !s.found)
		return -1;
	if (size)
		buf[s.len < size ? s.len : size - 1] = 0;
	if (type)
		*type = s.type;
	return (ssize_t)s.len;
}
