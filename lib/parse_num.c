// SPDX-License-Identifier: GPL-2.0
#include "parse_num.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	int hex;

	/* strtoull() skips blanks and accepts "-1" as ULLONG_MAX: refuse both. */
	if (!s || !isdigit((unsigned char)s[0]))
		return -1;
	hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	if (hex && !isxdigit((unsigned char)s[2]))
		return -1;	/* "0x", or "0x-1" */
	if (!hex && s[0] == '0' && s[1])
		return -1;	/* octal to strtoull, a typo to a person */
	errno = 0;
	v = strtoull(hex ? s + 2 : s, &end, hex ? 16 : 10);
	if (errno || *end || v > max)
		return -1;
	*out = v;
	return 0;
}
