// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer: hwpoison-guest --watch's requests (tools/memory_failure_event.c)
 * on any bytes. The input is stdin as the watch reads it: lines, each
 * parsed by watch_request_parse() from a malloc() of its exact size (so
 * that ASan catches a read past it), and what the parser promises is
 * checked:
 *   - every request is one of the kinds, a refusal says why;
 *   - a "save FILE" path is inside the line, absolute, without a control
 *     byte, shorter than PATH_MAX; its answer line (watch_save_line(), with
 *     the line itself as libvirt's error and as the domain's name) is one
 *     JSON object whose "path", "domain" and "error" read back as given,
 *     by the project's own JSON reader (lib/json_line.c) - where the path
 *     is UTF-8, as JSON strings must be;
 *   - the memory_failure line (mf_format()) with the line as the domain's
 *     name reads back the same way, or its start: mf_format() escapes the
 *     name into 256 bytes and cuts what does not fit, between whole
 *     characters;
 *   - a "poison GPA" request is taken exactly when the command line's
 *     number parser (lib/parse_num.c) takes its operand, with the same
 *     value: "poison 0612000" is refused, never read as octal (issue #36 N5).
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json_line.h"
#include "memory_failure_event.h"
#include "parse_num.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* s is UTF-8 as RFC 3629 spells it (what a JSON string must be) */
static int utf8(const unsigned char *s)
{
	while (*s) {
		unsigned int n, cp, i;

		if (*s < 0x80) {
			s++;
			continue;
		}
		n = *s >= 0xf0 ? 3 : *s >= 0xe0 ? 2 : *s >= 0xc0 ? 1 : 0;
		if (!n || *s > 0xf4)
			return 0;
		cp = *s & (0x3f >> n);
		for (i = 1; i <= n; i++) {
			if ((s[i] & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (s[i] & 0x3f);
		}
		if (cp < (n == 1 ? 0x80u : n == 2 ? 0x800u : 0x10000u) || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		s += n + 1;
	}
	return 1;
}

/* The member name of line reads back as want (a JSON string), or its start if cut_ok. */
static void reads_back(const char *line, const char *name, const char *want, int cut_ok)
{
	size_t n = strlen(want) + 1;
	char *buf = malloc(n + 1), why[160];
	ssize_t got;

	if (!buf)
		abort();
	got = json_line_member(line, name, buf, n + 1, why, sizeof(why));
	if (got < 0 || (size_t)got > n - 1 || strncmp(buf, want, got) ||
	    (!cut_ok && (size_t)got != n - 1))
		abort();
	free(buf);
}

static void save_answer(const char *line, const char *path)
{
	char *answer = watch_save_line(line, path, 0, line, "running", 123);

	if (!answer)
		abort();
	if (utf8((const unsigned char *)path) && utf8((const unsigned char *)line)) {
		reads_back(answer, "path", path, 0);
		reads_back(answer, "domain", line, 0);
		reads_back(answer, "error", line, 0);
	}
	free(answer);
}

/*
 * "poison X" (X without a space or CR) is a poison request exactly when
 * parse_u64() takes X, at its value: the watch and the command line read a
 * GPA by one rule.
 */
static void poison_as_command_line(const char *copy, int kind, const struct watch_request *r)
{
	uint64_t v;
	size_t n;

	if (strncmp(copy, "poison ", 7))
		return;
	n = strlen(copy + 7);
	if (strchr(copy + 7, ' ') || strchr(copy + 7, '\r') || n > 64)
		return;
	if (parse_u64(copy + 7, UINT64_MAX, &v)) {
		if (kind == WATCH_REQ_POISON)
			abort();	/* taken by the watch, refused by the command line */
	} else if (kind != WATCH_REQ_POISON || r->gpa != v) {
		abort();	/* taken by the command line, not by the watch (or elsewhere) */
	}
}

static void one_line(const uint8_t *p, size_t n)
{
	char *line = malloc(n + 1), *copy = malloc(n + 1);
	struct watch_request r;
	const unsigned char *c;
	int kind;

	if (!line || !copy)
		abort();
	memcpy(line, p, n);
	line[n] = 0;
	memcpy(copy, line, n + 1);
	kind = watch_request_parse(line, &r);
	if (kind != r.kind || kind < WATCH_REQ_NONE || kind > WATCH_REQ_BAD)
		abort();
	if (kind == WATCH_REQ_BAD && (!r.why[0] || !memchr(r.why, 0, sizeof(r.why))))
		abort();	/* a refusal says why */
	if (kind == WATCH_REQ_SAVE) {
		if (r.path < line || r.path > line + n || r.path[0] != '/' ||
		    strlen(r.path) >= PATH_MAX)
			abort();
		for (c = (const unsigned char *)r.path; *c; c++)
			if (*c < 0x20 || *c == 0x7f)
				abort();
		save_answer(copy, r.path);
	}
	poison_as_command_line(copy, kind, &r);
	if (utf8((const unsigned char *)copy)) {
		char out[4096];

		if (mf_format(out, sizeof(out), copy, n & 3, n % 7, (unsigned int)n, n) <
		    (int)sizeof(out))
			reads_back(out, "domain", copy, 1);
	}
	free(line);
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t start = 0, i;

	/* stdin's lines; a NUL ends a line's string early, as it would for the watch */
	for (i = 0; i <= size; i++) {
		if (i < size && data[i] != '\n')
			continue;
		one_line(data + start, i - start);
		start = i + 1;
	}
	return 0;
}
