// SPDX-License-Identifier: GPL-2.0
/* hwpoison-guest --watch: its request lines and its save answer, without libvirt */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_line.h"
#include "memory_failure_event.h"
#include "unit.h"

/* parse a copy of text (the parser writes over a trailing CR) */
static int parse(const char *text, struct watch_request *r, char *buf, size_t len)
{
	snprintf(buf, len, "%s", text);
	return watch_request_parse(buf, r);
}

#define REFUSED(text, why_has)							\
	do {									\
		CHECK_EQ(parse(text, &r, buf, sizeof(buf)), WATCH_REQ_BAD);	\
		CHECK(strstr(r.why, why_has) != NULL, "'%s': why '%s' has '%s'", \
		      text, r.why, why_has);					\
	} while (0)

UNIT_TEST(watch_request, "watch: request lines, poison GPA, save FILE, quit")
{
	struct watch_request r;
	char buf[PATH_MAX + 64], *longest;

	/* nothing, and quit; a driver's CRLF */
	CHECK_EQ(parse("", &r, buf, sizeof(buf)), WATCH_REQ_NONE);
	CHECK_EQ(parse("\r", &r, buf, sizeof(buf)), WATCH_REQ_NONE);
	CHECK_EQ(parse("quit", &r, buf, sizeof(buf)), WATCH_REQ_QUIT);
	CHECK_EQ(parse("quit\r", &r, buf, sizeof(buf)), WATCH_REQ_QUIT);
	REFUSED("quit now", "not a request");

	/* poison GPA: hex or decimal, the whole operand a number */
	CHECK_EQ(parse("poison 0x19a5000", &r, buf, sizeof(buf)), WATCH_REQ_POISON);
	CHECK_EQ(r.gpa, 0x19a5000);
	CHECK_EQ(parse("poison 4096\r", &r, buf, sizeof(buf)), WATCH_REQ_POISON);
	CHECK_EQ(r.gpa, 4096);
	CHECK_EQ(parse("poison 0xffffffffffffffff", &r, buf, sizeof(buf)), WATCH_REQ_POISON);
	CHECK_EQ(r.gpa, 0xffffffffffffffffULL);
	/*
	 * The command line's number rule: a leading 0 before a digit is
	 * refused, not read as octal ("0612000" was GPA 0x31400, another page)
	 */
	REFUSED("poison 0612000", "not a number");
	REFUSED("poison 00x1000", "not a number");
	REFUSED("poison 0x", "not a number");
	REFUSED("poison 0x-1", "not a number");
	CHECK_EQ(parse("poison 0x612000", &r, buf, sizeof(buf)), WATCH_REQ_POISON);
	CHECK_EQ(r.gpa, 0x612000);
	CHECK_EQ(parse("poison 6365184", &r, buf, sizeof(buf)), WATCH_REQ_POISON);
	CHECK_EQ(r.gpa, 0x612000);
	CHECK_EQ(parse("poison 0", &r, buf, sizeof(buf)), WATCH_REQ_POISON);
	CHECK_EQ(r.gpa, 0);
	REFUSED("poison banana", "not a number");
	REFUSED("poison 0x1000 ", "not a number");
	REFUSED("poison 0x1000x", "not a number");
	REFUSED("poison -1", "not a number");	/* strtoull would take it as 2^64-1 */
	REFUSED("poison  0x1000", "not a number");
	REFUSED("poison \v0x1000", "not a number");
	REFUSED("poison 0x10000000000000000", "not a number");	/* past 64 bits */
	REFUSED("poison", "needs a GPA");
	REFUSED("poison ", "needs a GPA");
	/* a verb is a whole word: not a prefix of one, not one with more */
	REFUSED("p 0x1000", "not a request");
	REFUSED("poisonx 0x1000", "not a request");
	REFUSED(" poison 0x1000", "not a request");
	REFUSED("POISON 0x1000", "not a request");

	/* save FILE: the rest of the line, as it is */
	CHECK_EQ(parse("save /tmp/mp-poisoned-save.img", &r, buf, sizeof(buf)), WATCH_REQ_SAVE);
	CHECK(r.path && !strcmp(r.path, "/tmp/mp-poisoned-save.img"), "path '%s'", r.path);
	CHECK(r.path == buf + 5, "the path is the line's own bytes");
	CHECK_EQ(parse("save /tmp/a b \"c\"\\d\r", &r, buf, sizeof(buf)), WATCH_REQ_SAVE);
	CHECK(r.path && !strcmp(r.path, "/tmp/a b \"c\"\\d"), "spaces, quotes, backslash: '%s'",
	      r.path);
	CHECK_EQ(parse("save /tmp/\xc3\xa9t\xc3\xa9.img", &r, buf, sizeof(buf)), WATCH_REQ_SAVE);
	CHECK_EQ(parse("save /", &r, buf, sizeof(buf)), WATCH_REQ_SAVE);	/* libvirt's to refuse */
	REFUSED("save", "needs a file");
	REFUSED("save ", "needs a file");
	REFUSED("save tmp/x.img", "absolute");
	REFUSED("save ./x.img", "absolute");
	REFUSED("save ~/x.img", "absolute");
	REFUSED("save  /tmp/x.img", "absolute");	/* FILE would begin with a space */
	/* a carriage return inside FILE is not its end: refused, never cut there */
	REFUSED("save /tmp/a\rb", "control character");
	REFUSED("save /tmp/a\r\r", "control character");
	REFUSED("save /tmp/a\tb", "control character");
	REFUSED("save /tmp/a\x1b[2J", "control character");
	REFUSED("save /tmp/a\x7f", "control character");
	REFUSED("saves /tmp/x", "not a request");
	REFUSED("save/tmp/x", "not a request");
	/* PATH_MAX counts the NUL */
	longest = malloc(PATH_MAX + 8);
	memset(longest, 'a', PATH_MAX + 8);
	memcpy(longest, "save /", 6);
	longest[5 + PATH_MAX - 1] = 0;
	CHECK_EQ(parse(longest, &r, buf, sizeof(buf)), WATCH_REQ_SAVE);
	CHECK_EQ(strlen(r.path), PATH_MAX - 1);
	longest[5 + PATH_MAX - 1] = 'a';
	longest[5 + PATH_MAX] = 0;
	REFUSED(longest, "PATH_MAX");
	free(longest);
}

/* a member of line as json-field reads it, into v */
static const char *member(const char *line, const char *name, char *v, size_t len)
{
	if (json_line_member(line, name, v, len, NULL, 0) < 0)
		snprintf(v, len, "<absent or malformed>");
	return v;
}

UNIT_TEST(watch_save_line, "watch: the save line, every string escaped whole")
{
	static const char qemu_says[] = "internal error: unable to execute QEMU command 'migrate': "
		"Can't migrate this vm with hardware poisoned memory, please reboot the vm and try again";
	char *line, v[4096], big[3000];

	/* as the watch writes them */
	line = watch_save_line("hwlab-qemu", "/tmp/mp-fresh-save.img", 1, NULL, "gone", 12345);
	CHECK(line && !strcmp(line, "{\"event\":\"save\",\"domain\":\"hwlab-qemu\",\"status\":\"ok\","
			      "\"path\":\"/tmp/mp-fresh-save.img\",\"state_after\":\"gone\","
			      "\"t_ns\":12345}"), "a completed save: %s", line);
	free(line);
	line = watch_save_line("hwlab-qemu", "/tmp/p.img", 0, qemu_says, "running", 7);
	CHECK(line && !strcmp(line, "{\"event\":\"save\",\"domain\":\"hwlab-qemu\","
			      "\"status\":\"refused\",\"path\":\"/tmp/p.img\",\"error\":\"internal "
			      "error: unable to execute QEMU command 'migrate': Can't migrate this vm "
			      "with hardware poisoned memory, please reboot the vm and try again\","
			      "\"state_after\":\"running\",\"t_ns\":7}"), "a refused save: %s", line);
	CHECK(!strcmp(member(line, "error", v, sizeof(v)), qemu_says), "error read back: %s", v);
	free(line);

	/* quotes, backslashes and control characters in every string: read back the same */
	line = watch_save_line("d\"q\\", "/tmp/a \"b\"\\c", 0, "line one\nline \"two\"\t\\ \x01 end",
			       "paused", 1);
	CHECK(line && !strchr(line, '\n') && !strchr(line, '\t') && !strchr(line, '\x01'),
	      "no raw control character: %s", line);
	CHECK(!strcmp(member(line, "domain", v, sizeof(v)), "d\"q\\"), "domain: %s", v);
	CHECK(!strcmp(member(line, "path", v, sizeof(v)), "/tmp/a \"b\"\\c"), "path: %s", v);
	CHECK(!strcmp(member(line, "error", v, sizeof(v)), "line one\nline \"two\"\t\\ \x01 end"),
	      "error: %s", v);
	CHECK(!strcmp(member(line, "status", v, sizeof(v)), "refused"), "status: %s", v);
	CHECK(!strcmp(member(line, "state_after", v, sizeof(v)), "paused"), "state_after: %s", v);
	free(line);

	/*
	 * bytes that are no UTF-8 (a path is bytes; libvirt's message may
	 * quote anything), DEL and a C1 control: the line stays valid JSON,
	 * well-formed UTF-8 is kept as it is
	 */
	line = watch_save_line("d\xc2\x9b", "/tmp/\xff\xc3(\xed\xa0\x80\xc3\xa9", 0,
			       "\xe2\x82 \x7f \xf4\x90\x80\x80 \xe4\xb8\xad", "running", 1);
	CHECK(line && json_line_member(line, "path", v, sizeof(v), NULL, 0) >= 0 &&
	      !strcmp(v, "/tmp/\xc3\xbf\xc3\x83(\xc3\xad\xc2\xa0\xc2\x80\xc3\xa9"),
	      "path: a valid JSON string: %s", line ? line : "(none)");
	CHECK(line && json_line_member(line, "error", v, sizeof(v), NULL, 0) >= 0 &&
	      !strcmp(v, "\xc3\xa2\xc2\x82 \x7f \xc3\xb4\xc2\x90\xc2\x80\xc2\x80 "
			 "\xe4\xb8\xad"), "error: a valid JSON string: %s", line ? line : "(none)");
	CHECK(line && strstr(line, "\"domain\":\"d\\u009b\"") && strstr(line, "\\u007f") &&
	      strstr(line, "\xe4\xb8\xad"), "C1 and DEL escaped, UTF-8 kept: %s", line ? line : "(none)");
	free(line);

	/* a long message, all of it quotes: escaped whole, not cut */
	memset(big, '"', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	line = watch_save_line("d", "/x", 0, big, "running", 1);
	CHECK(line && json_line_member(line, "error", v, sizeof(v), NULL, 0) ==
	      (ssize_t)sizeof(big) - 1 && !strcmp(v, big), "2999 quotes read back whole");
	free(line);
	/* the error member only when refused */
	line = watch_save_line("d", "/x", 1, "ignored", "shutoff", 1);
	CHECK(line && !strstr(line, "\"error\""), "no error when saved: %s", line);
	free(line);
}
