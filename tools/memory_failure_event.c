// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include "memory_failure_event.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libvirt/libvirt.h>

#include "parse_num.h"

const char *mf_recipient_name(int recipient)
{
	switch (recipient) {
	case VIR_DOMAIN_EVENT_MEMORY_FAILURE_RECIPIENT_HYPERVISOR:
		return "hypervisor";
	case VIR_DOMAIN_EVENT_MEMORY_FAILURE_RECIPIENT_GUEST:
		return "guest";
	}
	return NULL;
}

const char *mf_action_name(int action)
{
	switch (action) {
	case VIR_DOMAIN_EVENT_MEMORY_FAILURE_ACTION_IGNORE:
		return "ignore";
	case VIR_DOMAIN_EVENT_MEMORY_FAILURE_ACTION_INJECT:
		return "inject";
	case VIR_DOMAIN_EVENT_MEMORY_FAILURE_ACTION_FATAL:
		return "fatal";
	case VIR_DOMAIN_EVENT_MEMORY_FAILURE_ACTION_RESET:
		return "reset";
	}
	return NULL;
}

/*
 * The length of the well-formed UTF-8 character at p (RFC 3629: no
 * overlong form, no surrogate, nothing past U+10FFFF), or 0.
 */
static size_t utf8_char_len(const unsigned char *p)
{
	unsigned int cp, n, i;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, cp = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, cp = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, cp = p[0] & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;	/* also the NUL at the string's end */
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

void mf_json_escape(char *out, size_t len, const char *name)
{
	const unsigned char *p = (const unsigned char *)name;
	size_t n = 0;

	while (*p && n + 7 < len) {
		size_t u = utf8_char_len(p);

		if (*p == '"' || *p == '\\') {
			n += snprintf(out + n, len - n, "\\%c", *p);
		} else if (*p < 0x20 || *p == 0x7f || !u) {
			/*
			 * a control character, or a byte that is no UTF-8 (a JSON
			 * text must be): as \u00XX, the byte's value, as the VMM's
			 * report lines write every byte past 0x7e
			 */
			n += snprintf(out + n, len - n, "\\u%04x", *p);
			u = 1;
		} else if (u == 2 && p[0] == 0xc2 && p[1] < 0xa0) {
			/* U+0080..U+009F, the C1 controls: escaped, not kept */
			n += snprintf(out + n, len - n, "\\u%04x", p[1]);
		} else if (n + u + 7 < len) {
			memcpy(out + n, p, u);
			n += u;
		} else {
			break;	/* no room for the whole character: never half of one */
		}
		p += u;
	}
	out[n] = 0;
}

int mf_format(char *out, size_t len, const char *domain, int recipient, int action,
	      unsigned int flags, uint64_t t_ns)
{
	char r[24], a[24], name[256];
	const char *rn = mf_recipient_name(recipient), *an = mf_action_name(action);

	if (!rn)
		snprintf(r, sizeof(r), "unknown:%d", recipient);
	if (!an)
		snprintf(a, sizeof(a), "unknown:%d", action);
	mf_json_escape(name, sizeof(name), domain);
	return snprintf(out, len,
			"{\"event\":\"memory_failure\",\"vmm\":\"qemu\",\"domain\":\"%s\","
			"\"recipient\":\"%s\",\"action\":\"%s\",\"action_required\":%s,"
			"\"recursive\":%s,\"t_ns\":%" PRIu64 "}",
			name, rn ? rn : r, an ? an : a,
			flags & VIR_DOMAIN_MEMORY_FAILURE_ACTION_REQUIRED ? "true" : "false",
			flags & VIR_DOMAIN_MEMORY_FAILURE_RECURSIVE ? "true" : "false", t_ns);
}

/* --- the watch's requests and its save line --- */

static int bad(struct watch_request *r, const char *why)
{
	snprintf(r->why, sizeof(r->why), "%s", why);
	r->kind = WATCH_REQ_BAD;
	return r->kind;
}

/* the verb is exactly word, followed by the end of the line or one space */
static const char *operand(const char *line, const char *word)
{
	size_t n = strlen(word);

	if (strncmp(line, word, n))
		return NULL;
	if (line[n] == 0)
		return line + n;	/* an empty operand: the caller says why that is wrong */
	return line[n] == ' ' ? line + n + 1 : NULL;
}

static int parse_poison(const char *arg, struct watch_request *r)
{
	uint64_t gpa;

	if (!*arg)
		return bad(r, "poison needs a GPA: 'poison GPA'");
	/*
	 * The command line's parser (lib/parse_num.h): 0x... or decimal, the
	 * whole operand; "0612000" is refused, not read as octal (0x31400, a
	 * different page), nor is a sign or a blank taken.
	 */
	if (parse_u64(arg, UINT64_MAX, &gpa))
		return bad(r, "the GPA is not a number (0x... or decimal without a leading 0)");
	r->gpa = gpa;
	r->kind = WATCH_REQ_POISON;
	return r->kind;
}

static int parse_save(const char *arg, struct watch_request *r)
{
	const unsigned char *p;

	if (!*arg)
		return bad(r, "save needs a file: 'save FILE'");
	if (*arg != '/')
		return bad(r, "FILE must be an absolute path");
	for (p = (const unsigned char *)arg; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return bad(r, "FILE has a control character (a newline, a carriage "
				   "return, a tab...)");
	if (strlen(arg) >= PATH_MAX)
		return bad(r, "FILE is longer than PATH_MAX");
	r->path = arg;
	r->kind = WATCH_REQ_SAVE;
	return r->kind;
}

int watch_request_parse(char *line, struct watch_request *r)
{
	size_t n = strlen(line);
	const char *arg;

	*r = (struct watch_request){ .kind = WATCH_REQ_NONE };
	/* a driver that writes CRLF: its CR is the line's end, not FILE's */
	if (n && line[n - 1] == '\r')
		line[--n] = 0;
	if (!n)
		return r->kind;
	if (!strcmp(line, "quit")) {
		r->kind = WATCH_REQ_QUIT;
		return r->kind;
	}
	arg = operand(line, "poison");
	if (arg)
		return parse_poison(arg, r);
	arg = operand(line, "save");
	if (arg)
		return parse_save(arg, r);
	return bad(r, "not a request: they are 'poison GPA', 'save FILE' (both with --domain) "
		   "and 'quit'");
}

/* s as a JSON string body, malloc'd: room for its longest escape, never cut */
static char *escaped(const char *s)
{
	size_t len = strlen(s) * 6 + 8;
	char *out = malloc(len);

	if (out)
		mf_json_escape(out, len, s);
	return out;
}

char *watch_save_line(const char *domain, const char *path, int saved, const char *error,
		      const char *state_after, uint64_t t_ns)
{
	char *d = escaped(domain), *p = escaped(path), *e = escaped(error ? error : "");
	char *s = escaped(state_after), *line = NULL;

	if (d && p && e && s &&
	    asprintf(&line, "{\"event\":\"save\",\"domain\":\"%s\",\"status\":\"%s\",\"path\":\"%s\","
		     "%s%s%s\"state_after\":\"%s\",\"t_ns\":%" PRIu64 "}", d,
		     saved ? "ok" : "refused", p, saved ? "" : "\"error\":\"", saved ? "" : e,
		     saved ? "" : "\",", s, t_ns) < 0)
		line = NULL;
	free(d);
	free(p);
	free(e);
	free(s);
	return line;
}
