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

/* json_line_value() of line: "type:value", or "<absent>" / "<malformed>". */
static const char *value_of(const char *line, const char *name, size_t index)
{
	static const char *const types[] = { "?", "string", "number", "literal", "array", "object" };
	static char buf[256], out[300];
	enum json_line_type type = 0;
	ssize_t n = json_line_value(line, name, index, &type, buf, sizeof(buf), NULL, 0);

	if (n == -1)
		return "<absent>";
	if (n == -2)
		return "<malformed>";
	snprintf(out, sizeof(out), "%s:%s", type <= JSON_LINE_OBJECT ? types[type] : "?", buf);
	return out;
}

#define CHECK_VALUE(line, name, index, want)					\
	do {									\
		const char *got_ = value_of(line, name, index);			\
		CHECK(!strcmp(got_, want), "%s[%zu] of %s: '%s', expected '%s'",	\
		      (name) ? (name) : "element", (size_t)(index), line, got_, want); \
	} while (0)

UNIT_TEST(json_line_value, "json_line: a value's type; an array's elements; a value in a value")
{
	const char *reply = "{\"return\": [{\"thread-id\": 4242, \"props\": {\"thread-id\": 0}},"
			    " {\"thread-id\": 4243}], \"id\": \"libvirt-13\"}";
	char cpus[256], cpu0[256];
	enum json_line_type type = 0;

	/* each type, told apart where the spelling is the same */
	CHECK_VALUE("{\"s\":\"{}\",\"o\":{}}", "s", 0, "string:{}");
	CHECK_VALUE("{\"s\":\"{}\",\"o\":{}}", "o", 0, "object:{}");
	CHECK_VALUE("{\"s\":\"12\",\"n\":12,\"m\":-1.5e3}", "s", 0, "string:12");
	CHECK_VALUE("{\"s\":\"12\",\"n\":12,\"m\":-1.5e3}", "n", 0, "number:12");
	CHECK_VALUE("{\"s\":\"12\",\"n\":12,\"m\":-1.5e3}", "m", 0, "number:-1.5e3");
	CHECK_VALUE("{\"t\":true,\"f\":false,\"z\":null}", "t", 0, "literal:true");
	CHECK_VALUE("{\"t\":true,\"f\":false,\"z\":null}", "z", 0, "literal:null");
	CHECK_VALUE("{\"a\":[ \"x\" ]}", "a", 0, "array:[\"x\"]");
	/* a duplicate: the last one counts, its type too */
	CHECK_VALUE("{\"d\":1,\"d\":\"one\"}", "d", 0, "string:one");
	CHECK_VALUE("{\"d\":\"one\",\"d\":1}", "d", 0, "number:1");
	/* an array's elements, by index: strings raw, the rest compact */
	CHECK_VALUE("[ \"a\\\"b\" , {\"k\" : [1]}, 3 ]", NULL, 0, "string:a\"b");
	CHECK_VALUE("[ \"a\\\"b\" , {\"k\" : [1]}, 3 ]", NULL, 1, "object:{\"k\":[1]}");
	CHECK_VALUE("[ \"a\\\"b\" , {\"k\" : [1]}, 3 ]", NULL, 2, "number:3");
	CHECK_VALUE("[ \"a\\\"b\" , {\"k\" : [1]}, 3 ]", NULL, 3, "<absent>");
	CHECK_VALUE("[]", NULL, 0, "<absent>");
	CHECK_VALUE(" [1,]", NULL, 0, "<malformed>");
	CHECK_VALUE("[1] 2", NULL, 0, "<malformed>");
	CHECK_VALUE("[" BRACKETS_OPEN BRACKETS_CLOSE "]", NULL, 0, "<malformed>");
	/* an array is no object, an object no array */
	CHECK_VALUE("[{\"k\":1}]", "k", 0, "<absent>");
	CHECK_VALUE("{\"k\":1}", NULL, 0, "<absent>");
	CHECK_VALUE("", NULL, 0, "<absent>");
	/* a value in a value: the compact JSON of one is the line of the next */
	CHECK(json_line_value(reply, "return", 0, &type, cpus, sizeof(cpus), NULL, 0) > 0 &&
	      type == JSON_LINE_ARRAY, "return: '%s'", cpus);
	CHECK(json_line_value(cpus, NULL, 0, &type, cpu0, sizeof(cpu0), NULL, 0) > 0 &&
	      type == JSON_LINE_OBJECT, "return[0]: '%s'", cpu0);
	CHECK_VALUE(cpu0, "thread-id", 0, "number:4242");
	CHECK_VALUE(cpus, NULL, 1, "object:{\"thread-id\":4243}");
	/* a string that spells an object stays a string: not a value to go into */
	CHECK_VALUE("{\"s\":\"{\\\"k\\\":1}\"}", "s", 0, "string:{\"k\":1}");
	/* the type is left alone when nothing is found */
	type = JSON_LINE_OBJECT;
	CHECK_EQ(json_line_value("{\"a\":1}", "b", 0, &type, NULL, 0, NULL, 0), -1);
	CHECK_EQ(type, JSON_LINE_OBJECT);
}
