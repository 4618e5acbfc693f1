/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One report line (one JSON object a line, as the VMM and hwpoison-guest
 * write them) parsed by RFC 8259 as it is read, one byte at a time, so that
 * memory is bounded whatever the line's length: the caller hears each
 * top-level member's name and value through hooks instead of getting a tree.
 *
 * What the parser takes: RFC 8259's grammar and nothing more: no NaN or
 * Infinity, no comments, no trailing commas, no control character inside a
 * string; strings must be UTF-8 (no overlong form, no encoded surrogate,
 * nothing past U+10FFFF), every escape including \uXXXX, and a surrogate
 * pair as one character; a lone surrogate escape is refused, as UTF-8
 * cannot carry it. Nesting deeper than JSON_LINE_MAX_DEPTH is refused (a
 * bound on the recursion, not on any report).
 *
 * A member's value reaches the caller as json-field prints it: a string as
 * it is (unescaped, UTF-8), anything else as compact JSON (12, true, null,
 * [1,"a"], {"k":2}); a number as the line spells it (1.50 stays 1.50);
 * strings inside arrays and objects escaped as JSON (quotes, backslashes
 * and control characters), non-ASCII as UTF-8. A duplicate member is
 * heard twice: the caller lets the last one count (what python's json does).
 */
#ifndef HWLAB_JSON_LINE_H
#define HWLAB_JSON_LINE_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#define JSON_LINE_MAX_DEPTH	128	/* arrays and objects, the line's own object included */
#define JSON_LINE_EXCERPT	200	/* bytes of the line kept for a message */

/*
 * What a caller hears of the line's top-level members, in this order for
 * each: member_name, bytes (the name, unescaped), member_value (after its
 * ':'), bytes (the value's spelling, as above), member_end. The bytes come
 * in pieces of any size. Any hook may be NULL. A malformed line stops
 * anywhere in this sequence.
 */
struct json_line_hooks {
	void (*member_name)(void *ctx);
	void (*member_value)(void *ctx);
	void (*member_end)(void *ctx);
	void (*bytes)(void *ctx, const char *p, size_t n);
	void *ctx;
};

enum json_line_kind {
	JSON_LINE_EOF,		/* no byte left: no line was read */
	JSON_LINE_OTHER,	/* not a report line: its first non-blank byte is not '{' */
	JSON_LINE_REPORT,	/* one JSON object, every member heard */
	JSON_LINE_MALFORMED,	/* a report line that is not one JSON object: see why */
};

/* What a value is: told by its first byte, as JSON spells each type's own way. */
enum json_line_type {
	JSON_LINE_STRING = 1,
	JSON_LINE_NUMBER,
	JSON_LINE_LITERAL,	/* true, false or null */
	JSON_LINE_ARRAY,
	JSON_LINE_OBJECT,
};

/* One line's parse: its state and, after json_line_read(), what it was. */
struct json_line {
	FILE *in;
	const struct json_line_hooks *hooks;
	unsigned long col;	/* bytes of the line consumed */
	int eol;		/* the line ended: '\n' seen (1) or EOF (-1, unterminated) */
	char excerpt[JSON_LINE_EXCERPT + 1];	/* the line's first bytes, NUL-terminated */
	size_t excerpt_len;
	char why[160];		/* the first reason the line is malformed, with its column */
	int type;		/* the member being heard: its value's enum json_line_type */
};

/*
 * Reads one line of in, to its '\n' (taken) or EOF, and parses it when it
 * is a report line: a line whose first non-blank byte is '{' (blanks as
 * python's str.lstrip() takes them, so "\v{" is a report line, and
 * malformed). l is filled for the caller's messages (eol, excerpt, why);
 * hooks (NULL: none) hear the members. Returns enum json_line_kind.
 */
int json_line_read(struct json_line *l, FILE *in, const struct json_line_hooks *hooks);

/* A wanted string (a member name, a filter's value) compared as pieces come. */
struct json_line_match {
	const char *want;
	size_t pos;
	int differs;
	int active;	/* being fed */
};

void json_line_match_start(struct json_line_match *m);
/* One piece of the string compared, when m is active. */
void json_line_match_feed(struct json_line_match *m, const char *p, size_t n);
/* Stop feeding m: did it get exactly its string (and was it active)? */
int json_line_match_end(struct json_line_match *m);

/*
 * The member name of the JSON object on line (NUL-terminated, one line;
 * the last of duplicates counts): its value as above into buf (size bytes,
 * NUL-terminated, cut short if it does not fit; buf may be NULL when size
 * is 0). Returns the value's whole length, as snprintf does; -1 when the
 * object has no such member or line is not a report line; -2 when line is
 * malformed (why, if not NULL, gets the reason: whysize bytes).
 */
ssize_t json_line_member(const char *line, const char *name, char *buf, size_t size,
			 char *why, size_t whysize);

/*
 * json_line_member(), and what the value is (*type, when found; type may
 * be NULL), so that a string is told from other JSON spelt the same; or,
 * name NULL, the element index (0 first) of the JSON array on line (a line
 * whose first non-blank byte is '['). A value inside a value is found by
 * calling again on the compact JSON its array or object comes as: a QMP
 * reply's "return", then its first element, then that object's "thread-id".
 */
ssize_t json_line_value(const char *line, const char *name, size_t index,
			enum json_line_type *type, char *buf, size_t size, char *why,
			size_t whysize);

#endif
