// SPDX-License-Identifier: GPL-2.0
/*
 * One line of the VMM's report as --soak takes it (hwpoison_guest.h): read
 * as JSON by lib/json_line, never searched as text, so that a member inside
 * another or a name inside a string ("reason") is not taken for the line's.
 * Pure, so that the unit tests read the lines the soak reads.
 */
#include <string.h>

#include "hwpoison_guest.h"
#include "json_line.h"
#include "parse_num.h"

/*
 * A top-level member as a number (decimal, or a quoted 0x... string) by
 * the command line's rule (lib/parse_num.h); 0 if absent, malformed (a
 * sign, a leading 0 that strtoull read as octal, trailing bytes), or
 * longer than any number.
 */
static uint64_t member_u64(const char *line, const char *name)
{
	char v[32];
	ssize_t n = json_line_member(line, name, v, sizeof(v), NULL, 0);
	uint64_t x;

	/* the length too: a \u0000 in the value would end the C string early */
	if (n < 0 || (size_t)n >= sizeof(v) || (size_t)n != strlen(v) ||
	    parse_u64(v, UINT64_MAX, &x))
		return 0;
	return x;
}

/* Is the line's top-level member name the string want? */
static int member_is(const char *line, const char *name, const char *want)
{
	char v[32];
	ssize_t n = json_line_member(line, name, v, sizeof(v), NULL, 0);

	/* the length too: a \u0000 in the value would end the C string early */
	return n >= 0 && (size_t)n == strlen(want) && !strcmp(v, want);
}

int hwpoison_guest_soak_line(const char *line, struct soak_line *s)
{
	memset(s, 0, sizeof(*s));
	if (member_is(line, "event", "guest_retired"))
		s->kind = SOAK_LINE_RETIRED;
	else if (member_is(line, "event", "sigbus") && member_is(line, "action", "inject"))
		s->kind = SOAK_LINE_INJECT;
	else
		return SOAK_LINE_OTHER;
	s->gpa = member_u64(line, "gpa");
	s->t_ns = member_u64(line, "t_ns");
	if (s->kind == SOAK_LINE_INJECT) {
		s->signal_t_ns = member_u64(line, "signal_t_ns");
		s->queued_t_ns = member_u64(line, "queued_t_ns");
		s->ar = member_is(line, "si_code", "BUS_MCEERR_AR");
	}
	return s->kind;
}
