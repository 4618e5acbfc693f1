// SPDX-License-Identifier: GPL-2.0
/*
 * lib/escape.c and lib/log.c: what others chose reaches a terminal as one
 * line of printable ASCII, however it was spelt.
 */
#include <string.h>

#include "escape.h"
#include "log.h"
#include "unit.h"

#define ESCAPES(in, len, outlen, want)						\
	do {									\
		char out_[outlen];						\
										\
		escape_bytes(out_, sizeof(out_), in, len);			\
		CHECK(!strcmp(out_, want), "'%s', expected '%s'", out_, want);	\
	} while (0)

UNIT_TEST(escape_bytes, "escape: printable ASCII kept, every other byte \\xNN, bounded")
{
	char twice[64], once[64];

	ESCAPES("plain text: a-z 0-9 ~", 21, 64, "plain text: a-z 0-9 ~");
	ESCAPES("\x1b[2J\n\r\t", 7, 64, "\\x1b[2J\\x0a\\x0d\\x09");
	ESCAPES("\x7f\x80\x9b\xc3\xa9\xff", 6, 64, "\\x7f\\x80\\x9b\\xc3\\xa9\\xff");
	ESCAPES("a\0b", 3, 64, "a\\x00b");	/* a length, not a C string */
	ESCAPES("", 0, 64, "");
	/* cut between whole escapes, marked; the NUL always fits */
	ESCAPES("abcdefgh", 8, 9, "abcdefgh");
	ESCAPES("abcdefghi", 9, 9, "abcde...");
	ESCAPES("\x1b\x1b\x1b", 3, 12, "\\x1b\\x1b...");
	ESCAPES("\x1b\x1b\x1b", 3, 13, "\\x1b\\x1b\\x1b");
	ESCAPES("abc", 3, 2, "a");
	ESCAPES("abc", 3, 1, "");
	/* escaping the escaped changes nothing: log.c may escape a site's text again */
	escape_str(once, sizeof(once), "\x1b]0;title\x07 \\x41");
	escape_str(twice, sizeof(twice), once);
	CHECK(!strcmp(once, twice) && !strcmp(once, "\\x1b]0;title\\x07 \\x41"), "'%s', '%s'",
	      once, twice);
	CHECK(!strcmp(escape_str(once, sizeof(once), NULL), "(null)"), "NULL: '%s'", once);
}

UNIT_TEST(log_escaped, "log: a message is escaped whole, whichever site forgot")
{
	const char *prog = log_prog;
	char err[512];

	log_prog = "hwlab-vmm";
	unit_stderr_catch();
	pr_err("restoring %s", "\x1b[2J\nhwlab-vmm: error: fake\r");
	pr_warn("%s", "\xc2\x9b" "31m");
	unit_stderr_caught(err, sizeof(err));
	log_prog = prog;
	CHECK(!strcmp(err, "hwlab-vmm: error: restoring \\x1b[2J\\x0ahwlab-vmm: error: fake\\x0d\n"
		      "hwlab-vmm: warning: \\xc2\\x9b31m\n"), "stderr: '%s'", err);
}
