// SPDX-License-Identifier: GPL-2.0
#include "escape.h"

#include <string.h>

static size_t escaped_len(unsigned char c)
{
	return c >= 0x20 && c < 0x7f ? 1 : 4;
}

char *escape_bytes(char *out, size_t outlen, const void *in, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = in;
	size_t n = 0, i, whole = 0, room;

	if (!outlen)
		return out;
	for (i = 0; i < len; i++)
		whole += escaped_len(p[i]);
	/* all of it, or as much as leaves room for the "..." that says it was cut */
	room = outlen - 1;
	if (whole > room && room > 3)
		room -= 3;
	for (i = 0; i < len && n + escaped_len(p[i]) <= room; i++) {
		if (escaped_len(p[i]) == 1) {
			out[n++] = (char)p[i];
			continue;
		}
		out[n++] = '\\';
		out[n++] = 'x';
		out[n++] = hex[p[i] >> 4];
		out[n++] = hex[p[i] & 15];
	}
	if (i < len && n + 3 < outlen) {
		memcpy(out + n, "...", 3);
		n += 3;
	}
	out[n] = 0;
	return out;
}

char *escape_str(char *out, size_t outlen, const char *s)
{
	if (!s)
		s = "(null)";
	return escape_bytes(out, outlen, s, strlen(s));
}
