// SPDX-License-Identifier: GPL-2.0
/*
 * A report line parsed by RFC 8259 as it is read (json_line.h): the bytes
 * of the line, its values but strings (json_line_string.c), its object's
 * members told to the caller's hooks.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "json_line.h"
#include "json_line_internal.h"

/* --- input: one byte at a time, the line's column and excerpt kept */

/* The next byte of the input, left there. */
static int peek_raw(struct json_line *l)
{
	int c = getc_unlocked(l->in);

	if (c != EOF)
		ungetc(c, l->in);
	return c;
}

/* The next byte of the current line, left there; EOF at its end. */
int json_line__peek(struct json_line *l)
{
	int c;

	if (l->eol)
		return EOF;
	c = peek_raw(l);
	return c == '\n' ? EOF : c;
}

/* The next byte of the current line, or EOF at its end ('\n' is not taken). */
int json_line__next(struct json_line *l)
{
	int c;

	if (l->eol)
		return EOF;
	c = getc_unlocked(l->in);
	if (c == '\n' || c == EOF) {
		l->eol = c == '\n' ? 1 : -1;
		return EOF;
	}
	l->col++;
	if (l->excerpt_len < JSON_LINE_EXCERPT)
		l->excerpt[l->excerpt_len++] = (char)c;
	return c;
}

/* Record why the line is malformed (the first reason counts); returns -1. */
int json_line__bad(struct json_line *l, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	if (l->why[0])
		return -1;
	va_start(ap, fmt);
	vsnprintf(l->why, sizeof(l->why), fmt, ap);
	va_end(ap);
	n = strlen(l->why);
	snprintf(l->why + n, sizeof(l->why) - n, " at column %lu", l->col);
	return -1;
}

/* --- output: the bytes of a member's name or value, to the caller */

void json_line__emit(struct json_line *l, const char *p, size_t n)
{
	if (l->hooks->bytes)
		l->hooks->bytes(l->hooks->ctx, p, n);
}

static void hook(void (*fn)(void *ctx), void *ctx)
{
	if (fn)
		fn(ctx);
}

static void skip_ws(struct json_line *l)
{
	int c;

	while ((c = json_line__peek(l)) == ' ' || c == '\t' || c == '\r')
		json_line__next(l);
}

static int expect_byte(struct json_line *l, int want, const char *what)
{
	int c = json_line__next(l);

	if (c != want)
		return json_line__bad(l, "Expecting %s%s", what, c == EOF ? " (the line ends)" : "");
	return 0;
}

/* --- the values but strings */

/* -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, emitted as it is spelt */
static int digits(struct json_line *l)
{
	int n = 0, c;

	while ((c = json_line__peek(l)) >= '0' && c <= '9') {
		json_line__emit_c(l, (char)json_line__next(l));
		n++;
	}
	return n ? 0 : json_line__bad(l, "Expecting a digit");
}

static int number(struct json_line *l)
{
	int c = json_line__peek(l);

	if (c == '-') {
		json_line__emit_c(l, (char)json_line__next(l));
		c = json_line__peek(l);
	}
	if (c == '0') {
		json_line__emit_c(l, (char)json_line__next(l));
		c = json_line__peek(l);
		if (c >= '0' && c <= '9')
			return json_line__bad(l, "A number with a leading zero");
	} else if (digits(l)) {
		return -1;
	}
	if (json_line__peek(l) == '.') {
		json_line__emit_c(l, (char)json_line__next(l));
		if (digits(l))
			return -1;
	}
	c = json_line__peek(l);
	if (c == 'e' || c == 'E') {
		json_line__emit_c(l, (char)json_line__next(l));
		c = json_line__peek(l);
		if (c == '+' || c == '-')
			json_line__emit_c(l, (char)json_line__next(l));
		if (digits(l))
			return -1;
	}
	return 0;
}

static int literal(struct json_line *l, const char *word)
{
	const char *p;

	for (p = word; *p; p++)
		if (json_line__next(l) != *p)
			return json_line__bad(l, "Expecting value");
	json_line__emit(l, word, strlen(word));
	return 0;
}

static int value(struct json_line *l, int depth, int top);

/* An array or object after its opening bracket, emitted compactly. */
static int compound(struct json_line *l, int close, int depth)
{
	int c, first = 1;

	if (depth > JSON_LINE_MAX_DEPTH)
		return json_line__bad(l, "Nesting deeper than %d", JSON_LINE_MAX_DEPTH);
	json_line__emit_c(l, (char)(close == ']' ? '[' : '{'));
	for (;;) {
		skip_ws(l);
		c = json_line__peek(l);
		if (c == close && first) {
			json_line__next(l);
			break;
		}
		if (!first) {
			c = json_line__next(l);
			if (c == close)
				break;
			if (c != ',')
				return json_line__bad(l, "Expecting ',' delimiter");
			json_line__emit_c(l, ',');
			skip_ws(l);
		}
		first = 0;
		if (close == '}') {
			if (json_line__next(l) != '"')
				return json_line__bad(l, "Expecting property name enclosed in double quotes");
			if (json_line__string_body(l, 0))
				return -1;
			skip_ws(l);
			if (expect_byte(l, ':', "':' delimiter"))
				return -1;
			json_line__emit_c(l, ':');
		}
		if (value(l, depth, 0))
			return -1;
		skip_ws(l);
	}
	json_line__emit_c(l, (char)close);
	return 0;
}

/* A value; top: a member of the line's object, so a string goes out raw. */
static int value(struct json_line *l, int depth, int top)
{
	int c;

	skip_ws(l);
	c = json_line__peek(l);
	switch (c) {
	case '{':
		json_line__next(l);
		return compound(l, '}', depth + 1);
	case '[':
		json_line__next(l);
		return compound(l, ']', depth + 1);
	case '"':
		json_line__next(l);
		return json_line__string_body(l, top);
	case 't':
		return literal(l, "true");
	case 'f':
		return literal(l, "false");
	case 'n':
		return literal(l, "null");
	}
	if (c == '-' || (c >= '0' && c <= '9'))
		return number(l);
	if (c != EOF)
		json_line__next(l);
	return json_line__bad(l, "Expecting value");
}

/* A value's type, by its first byte (JSON spells each type's values with their own). */
static int type_of(int c)
{
	switch (c) {
	case '"': return JSON_LINE_STRING;
	case '[': return JSON_LINE_ARRAY;
	case '{': return JSON_LINE_OBJECT;
	case 't': case 'f': case 'n': return JSON_LINE_LITERAL;
	}
	return c == '-' || (c >= '0' && c <= '9') ? JSON_LINE_NUMBER : 0;
}

/*
 * One member of the line's object (its name, raw, then its value, top), or
 * one element of the line's array (no name: the caller hears no member_name).
 */
static int member(struct json_line *l, int named)
{
	if (named) {
		if (json_line__next(l) != '"')
			return json_line__bad(l, "Expecting property name enclosed in double quotes");
		hook(l->hooks->member_name, l->hooks->ctx);
		if (json_line__string_body(l, 1))
			return -1;
		skip_ws(l);
		if (expect_byte(l, ':', "':' delimiter"))
			return -1;
	}
	hook(l->hooks->member_value, l->hooks->ctx);
	skip_ws(l);
	l->type = type_of(json_line__peek(l));
	if (value(l, 1, 1))
		return -1;
	hook(l->hooks->member_end, l->hooks->ctx);
	return 0;
}

/* The line's object (or array: close is ']'), from its '{' to the end of the line. */
static int report_object(struct json_line *l, int close)
{
	int c;

	json_line__next(l);	/* the '{' or '[' */
	skip_ws(l);
	if (json_line__peek(l) == close) {
		json_line__next(l);
	} else {
		for (;;) {
			skip_ws(l);
			if (member(l, close == '}'))
				return -1;
			skip_ws(l);
			c = json_line__next(l);
			if (c == close)
				break;
			if (c != ',')
				return json_line__bad(l, "Expecting ',' delimiter");
		}
	}
	skip_ws(l);
	if (json_line__next(l) != EOF)
		return json_line__bad(l, "Extra data");
	return 0;
}

/* --- one line */

int json_line__read(struct json_line *l, FILE *in, const struct json_line_hooks *hooks, int open)
{
	static const struct json_line_hooks none;
	int c, odd_blank, kind = JSON_LINE_OTHER;

	memset(l, 0, sizeof(*l));
	l->in = in;
	l->hooks = hooks ? hooks : &none;
	if (peek_raw(l) == EOF)
		return JSON_LINE_EOF;
	/*
	 * Blanks as python's str.lstrip() takes them: a line whose "{"
	 * comes after a \v or \f is a report line, and malformed (JSON's
	 * blanks are space, tab, CR and LF only).
	 */
	odd_blank = 0;
	while ((c = json_line__peek(l)) == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f') {
		odd_blank |= c == '\v' || c == '\f';
		json_line__next(l);
	}
	if (c == open) {
		kind = JSON_LINE_REPORT;
		if (odd_blank)
			json_line__bad(l, "Expecting value (a \\v or \\f is not a JSON blank)");
		else
			report_object(l, open == '[' ? ']' : '}');
	}
	/* the rest of the line: to its end, the excerpt filled */
	while (json_line__next(l) != EOF)
		;
	l->excerpt[l->excerpt_len] = 0;
	return l->why[0] ? JSON_LINE_MALFORMED : kind;
}

int json_line_read(struct json_line *l, FILE *in, const struct json_line_hooks *hooks)
{
	return json_line__read(l, in, hooks, '{');
}
