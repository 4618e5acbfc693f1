// SPDX-License-Identifier: GPL-2.0
/*
 * A report line's strings (json_line.h): UTF-8 checked, escapes decoded,
 * each character passed on as it is (a member's name, a top-level string
 * value) or escaped again as compact JSON (strings inside a value).
 */
#include <string.h>

#include "json_line.h"
#include "json_line_internal.h"

/* One decoded character of a string: as it is (raw), or escaped as in JSON. */
static void json_line__emit_char(struct json_line *l, const char *utf8, size_t n, int raw)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char c = (unsigned char)utf8[0];
	char esc[7] = "\\u00";

	if (raw || n > 1 || (c >= 0x20 && c != '"' && c != '\\')) {
		json_line__emit(l, utf8, n);
		return;
	}
	switch (c) {
	case '"': json_line__emit(l, "\\\"", 2); return;
	case '\\': json_line__emit(l, "\\\\", 2); return;
	case '\b': json_line__emit(l, "\\b", 2); return;
	case '\f': json_line__emit(l, "\\f", 2); return;
	case '\n': json_line__emit(l, "\\n", 2); return;
	case '\r': json_line__emit(l, "\\r", 2); return;
	case '\t': json_line__emit(l, "\\t", 2); return;
	}
	esc[4] = hex[c >> 4];
	esc[5] = hex[c & 15];
	json_line__emit(l, esc, 6);
}

static int hex4(struct json_line *l, unsigned *v)
{
	int i, c;

	*v = 0;
	for (i = 0; i < 4; i++) {
		c = json_line__next(l);
		if (c >= '0' && c <= '9')
			*v = *v << 4 | (unsigned)(c - '0');
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			*v = *v << 4 | (unsigned)((c | 0x20) - 'a' + 10);
		else
			return json_line__bad(l, "Invalid \\uXXXX escape");
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
static int string_escape(struct json_line *l, int raw)
{
	unsigned cp, low;
	char utf8[4], c = (char)json_line__next(l);
	const char *simple = strchr("\"\\/bfnrt", c);
	static const char decoded[] = "\"\\/\b\f\n\r\t";

	if (c && simple) {
		json_line__emit_char(l, &decoded[simple - "\"\\/bfnrt"], 1, raw);
		return 0;
	}
	if (c != 'u')
		return json_line__bad(l, "Invalid \\escape");
	if (hex4(l, &cp))
		return -1;
	if (cp >= 0xdc00 && cp <= 0xdfff)
		return json_line__bad(l, "Lone surrogate \\u%04x (UTF-8 cannot carry it)", cp);
	if (cp >= 0xd800 && cp <= 0xdbff) {
		if (json_line__next(l) != '\\' || json_line__next(l) != 'u')
			return json_line__bad(l, "Lone surrogate \\u%04x (UTF-8 cannot carry it)", cp);
		if (hex4(l, &low))
			return -1;
		if (low < 0xdc00 || low > 0xdfff)
			return json_line__bad(l, "Lone surrogate \\u%04x (UTF-8 cannot carry it)", cp);
		cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
	}
	json_line__emit_char(l, utf8, utf8_encode(cp, utf8), raw);
	return 0;
}

/* The continuation bytes of a UTF-8 sequence led by c, checked. */
static int string_utf8(struct json_line *l, int c, int raw)
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
		return json_line__bad(l, "Invalid UTF-8 (byte 0x%02x)", c);
	s[0] = (char)c;
	for (i = 1; i < n; i++) {
		b = json_line__peek(l);
		if (b == EOF || (b & 0xc0) != 0x80)
			return json_line__bad(l, "Invalid UTF-8 (a sequence cut short)");
		json_line__next(l);
		s[i] = (char)b;
		cp = cp << 6 | ((unsigned)b & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return json_line__bad(l, "Invalid UTF-8 (U+%04X %s)", cp,
			   cp < min ? "in an overlong form" : "is not a character");
	json_line__emit_char(l, s, (size_t)n, raw);
	return 0;
}

/* A string after its opening quote; raw: its characters as they are, else as JSON. */
int json_line__string_body(struct json_line *l, int raw)
{
	int c;

	if (!raw)
		json_line__emit_c(l, '"');
	for (;;) {
		c = json_line__next(l);
		if (c == '"')
			break;
		if (c == EOF)
			return json_line__bad(l, "Unterminated string");
		if (c < 0x20)
			return json_line__bad(l, "Invalid control character 0x%02x in a string", c);
		if (c == '\\') {
			if (string_escape(l, raw))
				return -1;
		} else if (c >= 0x80) {
			if (string_utf8(l, c, raw))
				return -1;
		} else {
			char ch = (char)c;

			json_line__emit_char(l, &ch, 1, raw);
		}
	}
	if (!raw)
		json_line__emit_c(l, '"');
	return 0;
}

