// SPDX-License-Identifier: GPL-2.0
#include "parse_num.h"

#include <ctype.h>
#include <string.h>

static int digit_value(unsigned char c, unsigned int base)
{
	int v;

	if (c >= '0' && c <= '9')
		v = c - '0';
	else if (c >= 'a' && c <= 'f')
		v = c - 'a' + 10;
	else if (c >= 'A' && c <= 'F')
		v = c - 'A' + 10;
	else
		return -1;
	return (unsigned int)v < base ? v : -1;
}

/*
 * The one loop every spelling ends in: len digits of base, nothing else,
 * at least one; overflow past max (or past 64 bits) refused, not wrapped
 * or saturated as strtoull() and scanf("%x") do.
 */
static int digits(const char *s, size_t len, unsigned int base, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (!len)
		return -1;
	for (i = 0; i < len; i++) {
		int d = digit_value((unsigned char)s[i], base);

		/* v * base + d <= max, without computing past 64 bits */
		if (d < 0 || (uint64_t)d > max || v > (max - (uint64_t)d) / base)
			return -1;
		v = v * base + (uint64_t)d;
	}
	*out = v;
	return 0;
}

int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	size_t len;

	/* no blank, no sign: strtoull() skipped the one and took "-1" as ULLONG_MAX */
	if (!s || !isdigit((unsigned char)s[0]))
		return -1;
	len = strlen(s);
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return digits(s + 2, len - 2, 16, max, out);	/* "0x" alone: no digit */
	if (s[0] == '0' && s[1])
		return -1;	/* octal to strtoull, a typo to a person */
	return digits(s, len, 10, max, out);
}

int parse_field_u64(const char *s, size_t len, unsigned int base, uint64_t max, uint64_t *out)
{
	if (!s || (base != 10 && base != 16))
		return -1;
	/* decimal as the kernel writes it (no padding); hex may be zero-padded ("%08lx") */
	if (base == 10 && len > 1 && s[0] == '0')
		return -1;
	return digits(s, len, base, max, out);
}
