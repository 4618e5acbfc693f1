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
 * What the parser takes: RFC 8259's grammar and nothing more: no NaN or
 * Infinity, no comments, no trailing commas, no control character inside
 * a string; strings must be UTF-8 (no overlong form, no encoded surrogate,
 * nothing past U+10FFFF), every escape including \uXXXX, and a surrogate
 * pair as one character; a lone surrogate escape is refused, as UTF-8
 * cannot carry it. Nesting deeper than MAX_DEPTH is refused (a bound on
 * the recursion, not on any report). A duplicate member: the last one
 * counts, for FIELD and for the filters alike (what python's json does).
 * A number is printed and compared as the line spells it (1.50 stays
 * 1.50). Strings inside arrays and objects are printed escaped as JSON
 * (quotes, backslashes and control characters), non-ASCII as UTF-8.
 *
 * Memory is bounded whatever the input: the line is parsed as it is read,
 * one byte at a time, and the answers wait in a temporary file until the
 * last line has parsed (a line, or a member, of any length works).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH	128	/* arrays and objects, the line's own object included */
#define EXCERPT_BYTES	200	/* of a malformed line, in its message */

static const char prog[] = "json-field";

/* A wanted string (a member name or a filter's VALUE) compared as bytes come. */
struct matcher {
	const char *want;
	size_t pos;
	int differs;
	int active;	/* being fed the current key or value */
};

struct filter {
	struct matcher name, value;
	int seen, equal;	/* in the current line: last occurrence wins */
};

struct reader {
	FILE *in;
	const char *name;	/* for messages: FILE, or "stdin" */
	int live;
	unsigned long line;	/* 1-based number of the current line */
	unsigned long col;	/* bytes of it consumed */
	int eol;		/* the current line ended: '\n' seen (1) or EOF (-1) */
	char excerpt[EXCERPT_BYTES + 1];
	size_t excerpt_len;
	char why[160];		/* the first reason the line is malformed */

	/* what the line's top-level members are matched against */
	struct matcher field_name;
	struct filter *filters;
	int nfilters;

	/* answers: the field's spelling written to out as it is parsed */
	FILE *out;
	int to_out;		/* the value being parsed is FIELD's */
	long long committed;	/* end of the answers of the lines before */
	long long field_start;	/* where this line's FIELD answer starts */
	int field_seen;
};

static void usage(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nusage: %s [--live] FILE|- FIELD [NAME=VALUE...]\n", prog);
	exit(2);
}

static void out_failed(void) __attribute__((noreturn));
static void out_failed(void)
{
	fprintf(stderr, "%s: cannot keep the answers in a temporary file: %s\n", prog,
		strerror(errno));
	exit(2);
}

/* --- input: one byte at a time, the line's number and column kept */

/* The next byte of the input, left there. */
static int peek_raw(struct reader *r)
{
	int c = getc_unlocked(r->in);

	if (c != EOF)
		ungetc(c, r->in);
	return c;
}

/* The next byte of the current line, left there; EOF at its end. */
static int peek(struct reader *r)
{
	int c;

	if (r->eol)
		return EOF;
	c = peek_raw(r);
	return c == '\n' ? EOF : c;
}

/* The next byte of the current line, or EOF at its end ('\n' is not taken). */
static int next(struct reader *r)
{
	int c;

	if (r->eol)
		return EOF;
	c = getc_unlocked(r->in);
	if (c == '\n' || c == EOF) {
		r->eol = c == '\n' ? 1 : -1;
		return EOF;
	}
	r->col++;
	if (r->excerpt_len < EXCERPT_BYTES)
		r->excerpt[r->excerpt_len++] = (char)c;
	return c;
}

/* Record why the line is malformed (the first reason counts); returns -1. */
static int bad(struct reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(struct reader *r, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	if (r->why[0])
		return -1;
	va_start(ap, fmt);
	vsnprintf(r->why, sizeof(r->why), fmt, ap);
	va_end(ap);
	n = strlen(r->why);
	snprintf(r->why + n, sizeof(r->why) - n, " at column %lu", r->col);
	return -1;
}

/* --- output: the bytes of a value's spelling, to whoever wants them */

static void feed(struct matcher *m, const char *p, size_t n)
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

static void matcher_start(struct matcher *m)
{
	m->pos = 0;
	m->differs = 0;
	m->active = 1;
}

/* Stop feeding m: did it get exactly its string? */
static int matcher_end(struct matcher *m)
{
	int equal = m->active && !m->differs && !m->want[m->pos];

	m->active = 0;
	return equal;
}

static void emit(struct reader *r, const char *p, size_t n)
{
	int i;

	if (r->to_out && fwrite(p, 1, n, r->out) != n)
		out_failed();
	feed(&r->field_name, p, n);
	for (i = 0; i < r->nfilters; i++) {
		feed(&r->filters[i].name, p, n);
		feed(&r->filters[i].value, p, n);
	}
}

static void emit_c(struct reader *r, char c)
{
	emit(r, &c, 1);
}

/* One decoded character of a string: as it is (raw), or escaped as in JSON. */
static void emit_char(struct reader *r, const char *utf8, size_t n, int raw)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char c = (unsigned char)utf8[0];
	char esc[7] = "\\u00";

	if (raw || n > 1 || (c >= 0x20 && c != '"' && c != '\\')) {
		emit(r, utf8, n);
		return;
	}
	switch (c) {
	case '"': emit(r, "\\\"", 2); return;
	case '\\': emit(r, "\\\\", 2); return;
	case '\b': emit(r, "\\b", 2); return;
	case '\f': emit(r, "\\f", 2); return;
	case '\n': emit(r, "\\n", 2); return;
	case '\r': emit(r, "\\r", 2); return;
	case '\t': emit(r, "\\t", 2); return;
	}
	esc[4] = hex[c >> 4];
	esc[5] = hex[c & 15];
	emit(r, esc, 6);
}

/* --- the parser: RFC 8259 over the bytes of one line */

static void skip_ws(struct reader *r)
{
	int c;

	while ((c = peek(r)) == ' ' || c == '\t' || c == '\r')
		next(r);
}

static int expect_byte(struct reader *r, int want, const char *what)
{
	int c = next(r);

	if (c != want)
		return bad(r, "Expecting %s%s", what, c == EOF ? " (the line ends)" : "");
	return 0;
}

static int hex4(struct reader *r, unsigned *v)
{
	int i, c;

	*v = 0;
	for (i = 0; i < 4; i++) {
		c = next(r);
		if (c >= '0' && c <= '9')
			*v = *v << 4 | (unsigned)(c - '0');
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			*v = *v << 4 | (unsigned)((c | 0x20) - 'a' + 10);
		else
			return bad(r, "Invalid \\uXXXX escape");
	}
	return 0;
}

static size_t utf8_encode(unsigned cp, char *s)
{
	if (cp < 0x80) {
		s[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		s[0] = (char)(0xc0 | cp >> 6);
		s[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		s[0] = (char)(0xe0 | cp >> 12);
		s[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		s[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	s[0] = (char)(0xf0 | cp >> 18);
	s[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	s[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	s[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* After a backslash: one escape, decoded (a surrogate pair is one character). */
static int string_escape(struct reader *r, int raw)
{
	unsigned cp, low;
	char utf8[4], c = (char)next(r);
	const char *simple = strchr("\"\\/bfnrt", c);
	static const char decoded[] = "\"\\/\b\f\n\r\t";

	if (c && simple) {
		emit_char(r, &decoded[simple - "\"\\/bfnrt"], 1, raw);
		return 0;
	}
	if (c != 'u')
		return bad(r, "Invalid \\escape");
	if (hex4(r, &cp))
		return -1;
	if (cp >= 0xdc00 && cp <= 0xdfff)
		return bad(r, "Lone surrogate \\u%04x (UTF-8 cannot carry it)", cp);
	if (cp >= 0xd800 && cp <= 0xdbff) {
		if (next(r) != '\\' || next(r) != 'u')
			return bad(r, "Lone surrogate \\u%04x (UTF-8 cannot carry it)", cp);
		if (hex4(r, &low))
			return -1;
		if (low < 0xdc00 || low > 0xdfff)
			return bad(r, "Lone surrogate \\u%04x (UTF-8 cannot carry it)", cp);
		cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
	}
	emit_char(r, utf8, utf8_encode(cp, utf8), raw);
	return 0;
}

/* The continuation bytes of a UTF-8 sequence led by c, checked. */
static int string_utf8(struct reader *r, int c, int raw)
{
	char s[4];
	int n, i, b;
	unsigned cp, min;

	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = (unsigned)c & 0x1f, min = 0x80;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = (unsigned)c & 0x0f, min = 0x800;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = (unsigned)c & 0x07, min = 0x10000;
	else
		return bad(r, "Invalid UTF-8 (byte 0x%02x)", c);
	s[0] = (char)c;
	for (i = 1; i < n; i++) {
		b = peek(r);
		if (b == EOF || (b & 0xc0) != 0x80)
			return bad(r, "Invalid UTF-8 (a sequence cut short)");
		next(r);
		s[i] = (char)b;
		cp = cp << 6 | ((unsigned)b & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return bad(r, "Invalid UTF-8 (U+%04X %s)", cp,
			   cp < min ? "in an overlong form" : "is not a character");
	emit_char(r, s, (size_t)n, raw);
	return 0;
}

/* A string after its opening quote; raw: its characters as they are, else as JSON. */
static int string_body(struct reader *r, int raw)
{
	int c;

	if (!raw)
		emit_c(r, '"');
	for (;;) {
		c = next(r);
		if (c == '"')
			break;
		if (c == EOF)
			return bad(r, "Unterminated string");
		if (c < 0x20)
			return bad(r, "Invalid control character 0x%02x in a string", c);
		if (c == '\\') {
			if (string_escape(r, raw))
				return -1;
		} else if (c >= 0x80) {
			if (string_utf8(r, c, raw))
				return -1;
		} else {
			char ch = (char)c;

			emit_char(r, &ch, 1, raw);
		}
	}
	if (!raw)
		emit_c(r, '"');
	return 0;
}

/* -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, emitted as it is spelt */
static int digits(struct reader *r)
{
	int n = 0, c;

	while ((c = peek(r)) >= '0' && c <= '9') {
		emit_c(r, (char)next(r));
		n++;
	}
	return n ? 0 : bad(r, "Expecting a digit");
}

static int number(struct reader *r)
{
	int c = peek(r);

	if (c == '-') {
		emit_c(r, (char)next(r));
		c = peek(r);
	}
	if (c == '0') {
		emit_c(r, (char)next(r));
		c = peek(r);
		if (c >= '0' && c <= '9')
			return bad(r, "A number with a leading zero");
	} else if (digits(r)) {
		return -1;
	}
	if (peek(r) == '.') {
		emit_c(r, (char)next(r));
		if (digits(r))
			return -1;
	}
	c = peek(r);
	if (c == 'e' || c == 'E') {
		emit_c(r, (char)next(r));
		c = peek(r);
		if (c == '+' || c == '-')
			emit_c(r, (char)next(r));
		if (digits(r))
			return -1;
	}
	return 0;
}

static int literal(struct reader *r, const char *word)
{
	const char *p;

	for (p = word; *p; p++)
		if (next(r) != *p)
			return bad(r, "Expecting value");
	emit(r, word, strlen(word));
	return 0;
}

static int value(struct reader *r, int depth, int top);

/* An array or object after its opening bracket, emitted compactly. */
static int compound(struct reader *r, int close, int depth)
{
	int c, first = 1;

	if (depth > MAX_DEPTH)
		return bad(r, "Nesting deeper than %d", MAX_DEPTH);
	emit_c(r, (char)(close == ']' ? '[' : '{'));
	for (;;) {
		skip_ws(r);
		c = peek(r);
		if (c == close && first) {
			next(r);
			break;
		}
		if (!first) {
			c = next(r);
			if (c == close)
				break;
			if (c != ',')
				return bad(r, "Expecting ',' delimiter");
			emit_c(r, ',');
			skip_ws(r);
		}
		first = 0;
		if (close == '}') {
			if (next(r) != '"')
				return bad(r, "Expecting property name enclosed in double quotes");
			if (string_body(r, 0))
				return -1;
			skip_ws(r);
			if (expect_byte(r, ':', "':' delimiter"))
				return -1;
			emit_c(r, ':');
		}
		if (value(r, depth, 0))
			return -1;
		skip_ws(r);
	}
	emit_c(r, (char)close);
	return 0;
}

/* A value; top: a member of the line's object, so a string goes out raw. */
static int value(struct reader *r, int depth, int top)
{
	int c;

	skip_ws(r);
	c = peek(r);
	switch (c) {
	case '{':
		next(r);
		return compound(r, '}', depth + 1);
	case '[':
		next(r);
		return compound(r, ']', depth + 1);
	case '"':
		next(r);
		return string_body(r, top);
	case 't':
		return literal(r, "true");
	case 'f':
		return literal(r, "false");
	case 'n':
		return literal(r, "null");
	}
	if (c == '-' || (c >= '0' && c <= '9'))
		return number(r);
	if (c != EOF)
		next(r);
	return bad(r, "Expecting value");
}

/* --- one report line: its object's members matched as they are parsed */

/* The start of FIELD's value: where its answer goes (again, for a duplicate). */
static void field_begin(struct reader *r)
{
	if (fseeko(r->out, r->field_seen ? r->field_start : r->committed, SEEK_SET))
		out_failed();
	r->field_start = r->field_seen ? r->field_start : r->committed;
	r->field_seen = 1;
	r->to_out = 1;
}

static int member(struct reader *r)
{
	int i, is_field;

	if (next(r) != '"')
		return bad(r, "Expecting property name enclosed in double quotes");
	matcher_start(&r->field_name);
	for (i = 0; i < r->nfilters; i++)
		matcher_start(&r->filters[i].name);
	if (string_body(r, 1))
		return -1;
	is_field = matcher_end(&r->field_name);
	for (i = 0; i < r->nfilters; i++)
		if (matcher_end(&r->filters[i].name))
			matcher_start(&r->filters[i].value);
	skip_ws(r);
	if (expect_byte(r, ':', "':' delimiter"))
		return -1;
	if (is_field)
		field_begin(r);
	if (value(r, 1, 1))
		return -1;
	r->to_out = 0;
	for (i = 0; i < r->nfilters; i++) {
		struct filter *f = &r->filters[i];

		if (f->value.active) {
			f->seen = 1;
			f->equal = matcher_end(&f->value);
		}
	}
	return 0;
}

static int report_object(struct reader *r)
{
	int c;

	next(r);	/* the '{' */
	skip_ws(r);
	if (peek(r) == '}') {
		next(r);
	} else {
		for (;;) {
			skip_ws(r);
			if (member(r))
				return -1;
			skip_ws(r);
			c = next(r);
			if (c == '}')
				break;
			if (c != ',')
				return bad(r, "Expecting ',' delimiter");
		}
	}
	skip_ws(r);
	if (next(r) != EOF)
		return bad(r, "Extra data");
	return 0;
}

/* Did the line just parsed answer? Keep its answer, or drop it. */
static void line_done(struct reader *r, int keep)
{
	int i, match = keep && r->field_seen;

	for (i = 0; i < r->nfilters; i++)
		match = match && r->filters[i].seen && r->filters[i].equal;
	if (match) {
		if (fputc('\n', r->out) == EOF)
			out_failed();
		r->committed = ftello(r->out);
		if (r->committed < 0)
			out_failed();
	}
}

static void line_reset(struct reader *r)
{
	int i;

	r->line++;
	r->col = 0;
	r->eol = 0;
	r->excerpt_len = 0;
	r->why[0] = 0;
	r->field_seen = 0;
	r->to_out = 0;
	for (i = 0; i < r->nfilters; i++)
		r->filters[i].seen = r->filters[i].equal = 0;
}

/* Every line of the input; 0, or exits 2 on a malformed report line. */
static void read_lines(struct reader *r)
{
	int c, odd_blank;

	while (peek_raw(r) != EOF) {
		line_reset(r);
		/*
		 * Blanks as python's str.lstrip() takes them: a line whose "{"
		 * comes after a \v or \f is a report line, and malformed (JSON's
		 * blanks are space, tab, CR and LF only).
		 */
		odd_blank = 0;
		while ((c = peek(r)) == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f') {
			odd_blank |= c == '\v' || c == '\f';
			next(r);
		}
		if (c == '{') {
			if (odd_blank)
				bad(r, "Expecting value (a \\v or \\f is not a JSON blank)");
			else
				report_object(r);
		}
		/* the rest of the line: to its end, the excerpt filled */
		while (next(r) != EOF)
			;
		if (r->eol < 0 && r->live) {
			line_done(r, 0);	/* not a line yet */
			break;
		}
		if (r->why[0]) {
			r->excerpt[r->excerpt_len] = 0;
			fprintf(stderr, "%s: %s:%lu: malformed report line (%s): %s\n", prog,
				r->name, r->line, r->why, r->excerpt);
			exit(2);
		}
		line_done(r, 1);
	}
	if (ferror(r->in))
		usage("cannot read %s: %s", r->name, strerror(errno));
}

static void answers_out(struct reader *r)
{
	char buf[65536];
	long long left = r->committed;
	size_t n;

	if (fflush(r->out) || fseeko(r->out, 0, SEEK_SET))
		out_failed();
	while (left > 0) {
		n = fread(buf, 1, left < (long long)sizeof(buf) ? (size_t)left : sizeof(buf), r->out);
		if (!n)
			out_failed();
		if (fwrite(buf, 1, n, stdout) != n)
			break;
		left -= (long long)n;
	}
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "%s: cannot write the answer: %s\n", prog, strerror(errno));
		exit(2);
	}
}

int main(int argc, char **argv)
{
	struct reader r = { 0 };
	char where[512] = "";
	const char *path;
	int i, len;

	argv++, argc--;
	if (argc && !strcmp(argv[0], "--live")) {
		r.live = 1;
		argv++, argc--;
	}
	if (argc < 2)
		usage("want FILE and FIELD");
	path = argv[0];
	r.field_name.want = argv[1];
	r.nfilters = argc - 2;
	r.filters = calloc((size_t)r.nfilters + 1, sizeof(*r.filters));
	if (!r.filters)
		usage("out of memory");
	for (i = 0; i < r.nfilters; i++) {
		char *f = argv[2 + i], *eq = strchr(f, '=');

		if (!eq || eq == f)
			usage("filter '%s' is not NAME=VALUE", f);
		*eq = 0;
		r.filters[i].name.want = f;
		r.filters[i].value.want = eq + 1;
		len = (int)strlen(where);
		snprintf(where + len, sizeof(where) - (size_t)len, "%s%s=%s", i ? " " : " where ",
			 f, eq + 1);
	}
	if (!strcmp(path, "-")) {
		r.in = stdin;
		r.name = "stdin";
	} else {
		r.in = fopen(path, "r");
		r.name = path;
		if (!r.in)
			usage("cannot read %s: %s", path, strerror(errno));
	}
	r.out = tmpfile();
	if (!r.out)
		out_failed();
	read_lines(&r);
	if (r.committed)
		answers_out(&r);
	else
		fprintf(stderr, "%s: %s: no report line with %s%s\n", prog, r.name,
			r.field_name.want, where);
	free(r.filters);
	return r.committed ? 0 : 1;
}
