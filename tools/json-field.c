// SPDX-License-Identifier: GPL-2.0
/*
 * json-field: one member of the report lines that match, read with a JSON
 * parser (RFC 8259), on the host and in the outer VM (which has no python).
 *
 *   json-field [--live] FILE|- FIELD [NAME=VALUE...]
 *
 * The VMM and hwpoison-guest report one JSON object per line
 * ({"event":"poison","pid":12,...}). For each report line whose members NAME
 * all equal VALUE, prints its member FIELD, one line each, in file order: a
 * string as it is (unescaped, UTF-8), anything else as compact JSON (12,
 * true, null, [1,"a"], {"k":2}). VALUE is compared the same way: a number
 * by its JSON spelling (pid=12), true/false/null likewise. A line that
 * matches but has no FIELD prints nothing.
 *
 * A line is a report line when its first non-blank character is "{"; the
 * others (stderr messages, sanitizer reports, console text that share a
 * log) are passed over. A report line that is not one JSON object is an
 * error, not a silent empty answer: FILE:LINE and the reason on stderr,
 * exit 2, and nothing on stdout, so that a caller that reads only $(...)
 * gets no answer from the lines before it either. --live: FILE is still
 * being written (a VMM running in the background), so an unterminated last
 * line is not a line yet and is passed over instead.
 *
 * Exit 0 when something was printed; 1 when no line matched (said on
 * stderr, so that an empty $(...) has a reason in the log); 2 for a
 * malformed line or bad arguments.
 *
 * The parser is lib/json_line.h's: RFC 8259 and nothing more, nesting to
 * JSON_LINE_MAX_DEPTH, a string as it is and anything else as compact JSON
 * (a number as the line spells it: 1.50 stays 1.50). A duplicate member:
 * the last one counts, for FIELD and for the filters alike (what python's
 * json does).
 *
 * Memory is bounded whatever the input: the line is parsed as it is read,
 * one byte at a time, and the answers wait in a temporary file until the
 * last line has parsed (a line, or a member, of any length works).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_line.h"
#include "log.h"

static const char prog[] = "json-field";

struct filter {
	struct json_line_match name, value;
	int seen, equal;	/* in the current line: last occurrence wins */
};

/* What the lines' top-level members are matched against, and the answers. */
struct answers {
	struct json_line_match field_name;
	struct filter *filters;
	int nfilters;

	/* answers: the field's spelling written to out as it is parsed */
	FILE *out;
	int to_out;		/* the value being parsed is FIELD's */
	long long committed;	/* end of the answers of the lines before */
	long long field_start;	/* where this line's FIELD answer starts */
	int field_seen;
};

#define usage(...) tool_exit(2, "[--live] FILE|- FIELD [NAME=VALUE...]", __VA_ARGS__)

static void out_failed(void) __attribute__((noreturn));
static void out_failed(void)
{
	pr_say("cannot keep the answers in a temporary file: %s", strerror(errno));
	exit(2);
}

/* --- one report line: its object's members matched as they are parsed */

/* The start of FIELD's value: where its answer goes (again, for a duplicate). */
static void field_begin(struct answers *a)
{
	if (fseeko(a->out, a->field_seen ? a->field_start : a->committed, SEEK_SET))
		out_failed();
	a->field_start = a->field_seen ? a->field_start : a->committed;
	a->field_seen = 1;
	a->to_out = 1;
}

static void member_name(void *ctx)
{
	struct answers *a = ctx;
	int i;

	json_line_match_start(&a->field_name);
	for (i = 0; i < a->nfilters; i++)
		json_line_match_start(&a->filters[i].name);
}

static void member_value(void *ctx)
{
	struct answers *a = ctx;
	int i, is_field = json_line_match_end(&a->field_name);

	for (i = 0; i < a->nfilters; i++)
		if (json_line_match_end(&a->filters[i].name))
			json_line_match_start(&a->filters[i].value);
	if (is_field)
		field_begin(a);
}

static void member_end(void *ctx)
{
	struct answers *a = ctx;
	int i;

	a->to_out = 0;
	for (i = 0; i < a->nfilters; i++) {
		struct filter *f = &a->filters[i];

		if (f->value.active) {
			f->seen = 1;
			f->equal = json_line_match_end(&f->value);
		}
	}
}

/* A member's name or value, in pieces: to the answers and the matchers. */
static void member_bytes(void *ctx, const char *p, size_t n)
{
	struct answers *a = ctx;
	int i;

	if (a->to_out && fwrite(p, 1, n, a->out) != n)
		out_failed();
	json_line_match_feed(&a->field_name, p, n);
	for (i = 0; i < a->nfilters; i++) {
		json_line_match_feed(&a->filters[i].name, p, n);
		json_line_match_feed(&a->filters[i].value, p, n);
	}
}

/* Did the line just parsed answer? Keep its answer, or drop it. */
static void line_done(struct answers *a, int keep)
{
	int i, match = keep && a->field_seen;

	for (i = 0; i < a->nfilters; i++)
		match = match && a->filters[i].seen && a->filters[i].equal;
	if (match) {
		if (fputc('\n', a->out) == EOF)
			out_failed();
		a->committed = ftello(a->out);
		if (a->committed < 0)
			out_failed();
	}
}

static void line_reset(struct answers *a)
{
	int i;

	a->field_seen = 0;
	a->to_out = 0;
	for (i = 0; i < a->nfilters; i++)
		a->filters[i].seen = a->filters[i].equal = 0;
}

/* Every line of in; returns, or exits 2 on a malformed report line. */
static void read_lines(struct answers *a, FILE *in, const char *name, int live)
{
	const struct json_line_hooks hooks = {
		.member_name = member_name, .member_value = member_value,
		.member_end = member_end, .bytes = member_bytes, .ctx = a,
	};
	unsigned long line = 0;	/* 1-based number of the current line */
	struct json_line l;
	int kind;

	for (;;) {
		line_reset(a);
		kind = json_line_read(&l, in, &hooks);
		if (kind == JSON_LINE_EOF)
			break;
		line++;
		if (l.eol < 0 && live) {
			line_done(a, 0);	/* not a line yet */
			break;
		}
		if (kind == JSON_LINE_MALFORMED) {
			/* the line's bytes, whatever they are: escaped (lib/log.h) */
			pr_say("%s:%lu: malformed report line (%s): %s", name, line, l.why,
			       l.excerpt);
			exit(2);
		}
		line_done(a, 1);
	}
	if (ferror(in))
		usage("cannot read %s: %s", name, strerror(errno));
}

static void answers_out(struct answers *a)
{
	char buf[65536];
	long long left = a->committed;
	size_t n;

	if (fflush(a->out) || fseeko(a->out, 0, SEEK_SET))
		out_failed();
	while (left > 0) {
		n = fread(buf, 1, left < (long long)sizeof(buf) ? (size_t)left : sizeof(buf), a->out);
		if (!n)
			out_failed();
		if (fwrite(buf, 1, n, stdout) != n)
			break;
		left -= (long long)n;
	}
	if (fflush(stdout) || ferror(stdout)) {
		pr_say("cannot write the answer: %s", strerror(errno));
		exit(2);
	}
}

int main(int argc, char **argv)
{
	struct answers a = { 0 };
	char where[512] = "";
	const char *path, *name;
	int i, len, live = 0;
	FILE *in;

	log_prog = prog;
	argv++, argc--;
	if (argc && !strcmp(argv[0], "--live")) {
		live = 1;
		argv++, argc--;
	}
	if (argc < 2)
		usage("want FILE and FIELD");
	path = argv[0];
	a.field_name.want = argv[1];
	a.nfilters = argc - 2;
	a.filters = calloc((size_t)a.nfilters + 1, sizeof(*a.filters));
	if (!a.filters)
		usage("out of memory");
	for (i = 0; i < a.nfilters; i++) {
		char *f = argv[2 + i], *eq = strchr(f, '=');

		if (!eq || eq == f)
			usage("filter '%s' is not NAME=VALUE", f);
		*eq = 0;
		a.filters[i].name.want = f;
		a.filters[i].value.want = eq + 1;
		len = (int)strlen(where);
		snprintf(where + len, sizeof(where) - (size_t)len, "%s%s=%s", i ? " " : " where ",
			 f, eq + 1);
	}
	if (!strcmp(path, "-")) {
		in = stdin;
		name = "stdin";
	} else {
		in = fopen(path, "r");
		name = path;
		if (!in)
			usage("cannot read %s: %s", path, strerror(errno));
	}
	a.out = tmpfile();
	if (!a.out)
		out_failed();
	read_lines(&a, in, name, live);
	if (a.committed)
		answers_out(&a);
	else
		pr_say("%s: no report line with %s%s", name, a.field_name.want, where);
	free(a.filters);
	return a.committed ? 0 : 1;
}
