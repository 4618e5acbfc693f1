// SPDX-License-Identifier: GPL-2.0
/* lib/json_line: the report-line parser json-field reads the checks' logs with. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "json_line.h"
#include "unit.h"

#define BRACKETS_OPEN	"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[" \
			"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
#define BRACKETS_CLOSE	"]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]" \
			"]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"

/* json_line_member() of line: the value, or "<absent>" / "<malformed: why>". */
static const char *member(const char *line, const char *name)
{
	static char buf[1024], why[160];
	ssize_t n = json_line_member(line, name, buf, sizeof(buf), why, sizeof(why));

	if (n == -1)
		return "<absent>";
	if (n == -2) {
		snprintf(buf, sizeof(buf), "<malformed: %s>", why);
		return buf;
	}
	return buf;
}

#define CHECK_MEMBER(line, name, want)						\
	do {									\
		const char *got_ = member(line, name);				\
		CHECK(!strcmp(got_, want), "%s of %s: '%s', expected '%s'",	\
		      name, line, got_, want);					\
	} while (0)

UNIT_TEST(json_line_member, "json_line: a member's value, string raw and the rest compact")
{
	const char *line = "{\"event\":\"poison\", \"pid\" : 12,\"x\":1.50,\"t\":true,\"n\":null,"
			   "\"a\":[ 1, \"a\\\"b\\n\\u0001\" ],\"o\":{ \"k\" : {\"z\":[]} },\"e\":\"\"}";
	char small[4];

	CHECK_MEMBER(line, "event", "poison");
	CHECK_MEMBER(line, "pid", "12");
	CHECK_MEMBER(line, "x", "1.50");		/* as spelt, not 1.5 */
	CHECK_MEMBER(line, "t", "true");
	CHECK_MEMBER(line, "n", "null");
	CHECK_MEMBER(line, "a", "[1,\"a\\\"b\\n\\u0001\"]");	/* inner strings stay escaped */
	CHECK_MEMBER(line, "o", "{\"k\":{\"z\":[]}}");
	CHECK_MEMBER(line, "e", "");
	CHECK_MEMBER(line, "nope", "<absent>");
	CHECK_MEMBER(line, "k", "<absent>");		/* top-level members only */
	CHECK_MEMBER(line, "even", "<absent>");		/* a prefix is not the name */
	CHECK_MEMBER(line, "events", "<absent>");
	/* the last of duplicates counts, however long the first */
	CHECK_MEMBER("{\"pid\":[1,2,3,4,5],\"pid\":2}", "pid", "2");
	CHECK_MEMBER("{\"pid\":2,\"pid\":\"abcdef\"}", "pid", "abcdef");
	/* a name is matched unescaped */
	CHECK_MEMBER("{\"p\\u0069d\":7}", "pid", "7");
	/* not a report line, no line, an empty object */
	CHECK_MEMBER("pid: 12", "pid", "<absent>");
	CHECK_MEMBER("", "pid", "<absent>");
	CHECK_MEMBER(" { }", "pid", "<absent>");
	CHECK_MEMBER("{\"pid\":1}\n{\"pid\":2}", "pid", "1");	/* one line only */
	/* cut short like snprintf: the whole length returned */
	CHECK_EQ(json_line_member("{\"s\":\"abcdef\"}", "s", small, sizeof(small), NULL, 0), 6);
	CHECK(!strcmp(small, "abc"), "cut short: '%s'", small);
	CHECK_EQ(json_line_member("{\"s\":\"abcdef\"}", "s", NULL, 0, NULL, 0), 6);
}

UNIT_TEST(json_line_strings, "json_line: escapes, surrogates and UTF-8")
{
	CHECK_MEMBER("{\"s\":\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u0041\\u00e9\\u20ac\"}", "s",
		     "\"\\/\b\f\n\r\tA\xc3\xa9\xe2\x82\xac");
	/* a surrogate pair is one character, either case of hex */
	CHECK_MEMBER("{\"s\":\"\\ud83d\\ude00\"}", "s", "\xf0\x9f\x98\x80");
	CHECK_MEMBER("{\"a\":[\"\\uD83D\\uDE00\"]}", "a", "[\"\xf0\x9f\x98\x80\"]");
	CHECK_MEMBER("{\"s\":\"caf\xc3\xa9\"}", "s", "caf\xc3\xa9");
	CHECK_MEMBER("{\"s\":\"\\ud83dx\"}", "s",
		     "<malformed: Lone surrogate \\ud83d (UTF-8 cannot carry it) at column 13>");
	CHECK_MEMBER("{\"s\":\"\\ude00\"}", "s",
		     "<malformed: Lone surrogate \\ude00 (UTF-8 cannot carry it) at column 12>");
	CHECK_MEMBER("{\"s\":\"\\ud83d\\ud83d\"}", "s",
		     "<malformed: Lone surrogate \\ud83d (UTF-8 cannot carry it) at column 18>");
	CHECK_MEMBER("{\"s\":\"\\u12g4\"}", "s", "<malformed: Invalid \\uXXXX escape at column 11>");
	CHECK_MEMBER("{\"s\":\"\\x\"}", "s", "<malformed: Invalid \\escape at column 8>");
	CHECK_MEMBER("{\"s\":\"a\x01\"}", "s",
		     "<malformed: Invalid control character 0x01 in a string at column 8>");
	CHECK_MEMBER("{\"s\":\"\xc0\xaf\"}", "s", "<malformed: Invalid UTF-8 (byte 0xc0) at column 7>");
	CHECK_MEMBER("{\"s\":\"\xe0\x80\xaf\"}", "s",
		     "<malformed: Invalid UTF-8 (U+002F in an overlong form) at column 9>");
	CHECK_MEMBER("{\"s\":\"\xed\xa0\x80\"}", "s",
		     "<malformed: Invalid UTF-8 (U+D800 is not a character) at column 9>");
	CHECK_MEMBER("{\"s\":\"\xf4\x90\x80\x80\"}", "s",
		     "<malformed: Invalid UTF-8 (U+110000 is not a character) at column 10>");
	CHECK_MEMBER("{\"s\":\"\xe2\x82\"}", "s",
		     "<malformed: Invalid UTF-8 (a sequence cut short) at column 8>");
	CHECK_MEMBER("{\"s\":\"abc", "s", "<malformed: Unterminated string at column 9>");
}

UNIT_TEST(json_line_grammar, "json_line: RFC 8259 and nothing more")
{
	char line[512];
	int n;

	CHECK_MEMBER("{\"a\":-0,\"b\":-1.25E+10}", "b", "-1.25E+10");
	CHECK_MEMBER("{\"a\":012}", "a", "<malformed: A number with a leading zero at column 6>");
	CHECK_MEMBER("{\"a\":1.}", "a", "<malformed: Expecting a digit at column 7>");
	CHECK_MEMBER("{\"a\":NaN}", "a", "<malformed: Expecting value at column 6>");
	CHECK_MEMBER("{\"a\":tru}", "a", "<malformed: Expecting value at column 9>");
	CHECK_MEMBER("{\"a\":1,}", "a",
		     "<malformed: Expecting property name enclosed in double quotes at column 8>");
	CHECK_MEMBER("{\"a\":[1,]}", "a", "<malformed: Expecting value at column 9>");
	CHECK_MEMBER("{a:1}", "a",
		     "<malformed: Expecting property name enclosed in double quotes at column 2>");
	CHECK_MEMBER("{\"a\" 1}", "a", "<malformed: Expecting ':' delimiter at column 6>");
	CHECK_MEMBER("{\"a\":1} x", "a", "<malformed: Extra data at column 9>");
	CHECK_MEMBER("{\"a\":1}{}", "a", "<malformed: Extra data at column 8>");
	CHECK_MEMBER("{\"a\":1", "a", "<malformed: Expecting ',' delimiter at column 6>");
	/* python's lstrip() blanks make a report line; JSON's do not take \v */
	CHECK_MEMBER("\v{\"a\":1}", "a",
		     "<malformed: Expecting value (a \\v or \\f is not a JSON blank) at column 1>");
	CHECK_MEMBER(" \t\r{\"a\":1}\r", "a", "1");
	/* the line's own object is depth 1: 127 arrays inside it fit, 128 do not */
	n = snprintf(line, sizeof(line), "{\"a\":%.*s%.*s}", 127, BRACKETS_OPEN, 127, BRACKETS_CLOSE);
	CHECK(n > 0 && !strncmp(member(line, "a"), "[[", 2), "depth 128: %s", member(line, "a"));
	snprintf(line, sizeof(line), "{\"a\":%.*s%.*s}", 128, BRACKETS_OPEN, 128, BRACKETS_CLOSE);
	CHECK_MEMBER(line, "a", "<malformed: Nesting deeper than 128 at column 133>");
	CHECK_EQ(JSON_LINE_MAX_DEPTH, 128);
}

/* json_line_read()'s hooks, written down as they are called. */
struct heard {
	char s[256];
	size_t len;
};

static void heard_add(struct heard *h, const char *p, size_t n)
{
	if (h->len + n < sizeof(h->s)) {
		memcpy(h->s + h->len, p, n);
		h->len += n;
		h->s[h->len] = 0;
	}
}

static void heard_name(void *ctx) { heard_add(ctx, "<", 1); }
static void heard_value(void *ctx) { heard_add(ctx, "=", 1); }
static void heard_end(void *ctx) { heard_add(ctx, ">", 1); }
static void heard_bytes(void *ctx, const char *p, size_t n) { heard_add(ctx, p, n); }

UNIT_TEST(json_line_read, "json_line: lines of a log, their kinds and the hooks")
{
	static const char log[] = "console text {\"a\":1}\n"
				  "{\"pid\":12,\"s\":\"x\\ty\",\"o\":{\"k\":[true]}}\n"
				  "\n"
				  "  {\"pid\":}\n"
				  "{\"pid\":13";
	struct heard h = { 0 };
	const struct json_line_hooks hooks = {
		.member_name = heard_name, .member_value = heard_value,
		.member_end = heard_end, .bytes = heard_bytes, .ctx = &h,
	};
	struct json_line l;
	FILE *in = fmemopen((void *)log, sizeof(log) - 1, "r");

	if (!in)
		UNIT_SKIP("fmemopen: out of memory");
	CHECK_EQ(json_line_read(&l, in, &hooks), JSON_LINE_OTHER);
	CHECK(!strcmp(l.excerpt, "console text {\"a\":1}"), "excerpt '%s'", l.excerpt);
	CHECK_EQ(l.eol, 1);
	CHECK_EQ(h.len, 0);
	CHECK_EQ(json_line_read(&l, in, &hooks), JSON_LINE_REPORT);
	CHECK(!strcmp(h.s, "<pid=12><s=x\ty><o={\"k\":[true]}>"), "heard '%s'", h.s);
	CHECK_EQ(json_line_read(&l, in, NULL), JSON_LINE_OTHER);	/* a blank line */
	CHECK_EQ(l.col, 0);
	CHECK_EQ(json_line_read(&l, in, NULL), JSON_LINE_MALFORMED);
	CHECK(!strcmp(l.why, "Expecting value at column 10"), "why '%s'", l.why);
	CHECK(!strcmp(l.excerpt, "  {\"pid\":}"), "excerpt '%s'", l.excerpt);
	/* unterminated: what json-field --live passes over */
	CHECK_EQ(json_line_read(&l, in, NULL), JSON_LINE_MALFORMED);
	CHECK_EQ(l.eol, -1);
	CHECK_EQ(json_line_read(&l, in, NULL), JSON_LINE_EOF);
	fclose(in);
}

UNIT_TEST(json_line_match, "json_line: a wanted string compared piece by piece")
{
	struct json_line_match m = { .want = "poison" };

	json_line_match_feed(&m, "xx", 2);	/* not active: not heard */
	json_line_match_start(&m);
	json_line_match_feed(&m, "poi", 3);
	json_line_match_feed(&m, "", 0);
	json_line_match_feed(&m, "son", 3);
	CHECK_EQ(json_line_match_end(&m), 1);
	CHECK_EQ(json_line_match_end(&m), 0);	/* ended: no longer active */
	json_line_match_start(&m);
	json_line_match_feed(&m, "poi", 3);
	CHECK_EQ(json_line_match_end(&m), 0);	/* a prefix */
	json_line_match_start(&m);
	json_line_match_feed(&m, "poisons", 7);
	CHECK_EQ(json_line_match_end(&m), 0);	/* longer */
	json_line_match_start(&m);
	json_line_match_feed(&m, "poisoX", 6);
	json_line_match_feed(&m, "n", 1);
	CHECK_EQ(json_line_match_end(&m), 0);	/* a difference is not forgotten */
}
