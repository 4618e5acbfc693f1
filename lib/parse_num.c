// SPDX-License-Identifier: GPL-2.0
#include "parse_num.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	/* strtoull() skips blanks and accepts "-1" as ULLONG_MAX: refuse both. */
	if (!s || !isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v > max)
		return -1;
	*out = v;
	return 0;
}
