/* SPDX-License-Identifier: GPL-2.0 */
/*
 * QEMU's MEMORY_FAILURE event (qapi/run-state.json) as libvirt delivers it
 * (VIR_DOMAIN_EVENT_ID_MEMORY_FAILURE), written as one report line in the
 * vocabulary of hwlab-vmm's sigbus lines: recipient (hypervisor|guest),
 * action (ignore|inject|fatal|reset), action_required, recursive. One
 * reader then takes both VMMs' lines. And the watch's other pure parts
 * (libvirt_domain.c acts on them): what a request line on its stdin asks
 * for, whether its operand may be used, and the "save" answer line. Pure;
 * libvirt's header only for its enums, no libvirt call.
 */
#ifndef HWLAB_MEMORY_FAILURE_EVENT_H
#define HWLAB_MEMORY_FAILURE_EVENT_H

#include <stddef.h>
#include <stdint.h>

/* the names QEMU uses; NULL for a number libvirt did not have in 9.0 */
const char *mf_recipient_name(int recipient);
const char *mf_action_name(int action);
/*
 * name as the body of a JSON string (libvirt allows quotes and backslashes
 * in names): quotes, backslashes, control characters (C0, DEL, C1) escaped,
 * well-formed UTF-8 kept, any other byte as \u00XX, so that the line is
 * valid JSON whatever libvirt, a peer or a request supplied; cut only
 * between whole characters.
 */
void mf_json_escape(char *out, size_t len, const char *name);
/*
 * The line, with t_ns (CLOCK_MONOTONIC, when the event reached us), into
 * out. An unknown recipient or action is written as its number ("unknown:N"),
 * not dropped: a newer libvirt may add one. Returns snprintf's count.
 */
int mf_format(char *out, size_t len, const char *domain, int recipient, int action,
	      unsigned int flags, uint64_t t_ns);

/* The watch's requests, one line each on its stdin. */
enum watch_request_kind {
	WATCH_REQ_NONE,		/* an empty line: nothing to do */
	WATCH_REQ_QUIT,		/* "quit" */
	WATCH_REQ_POISON,	/* "poison GPA" */
	WATCH_REQ_SAVE,		/* "save FILE": virDomainSave(dom, FILE) */
	WATCH_REQ_BAD,		/* anything else, or an operand refused: why says which */
};

struct watch_request {
	int kind;		/* enum watch_request_kind */
	uint64_t gpa;		/* poison */
	const char *path;	/* save: inside the line parsed */
	char why[160];		/* bad: the reason, for the watch's error line */
};

/*
 * line (one request, its newline gone; one carriage return at its end is
 * dropped, written over) into r; returns r->kind. A verb is a whole word
 * ("p 0x1000" is not "poison"), an operand follows after one space: a GPA
 * as the command line reads it (lib/parse_num.h: 0x... or decimal, the
 * whole operand, no leading 0 before a digit); a FILE the
 * rest of the line, an absolute path of printable bytes (no newline or
 * other control character: it goes into libvirt's file name as it is, and
 * into a report line), shorter than PATH_MAX.
 */
int watch_request_parse(char *line, struct watch_request *r);

/*
 * The answer to "save FILE": one line, malloc'd (NULL when out of memory),
 * {"event":"save","domain":...,"status":"ok"|"refused","path":FILE,
 * ["error":libvirt's message, when refused,] "state_after":state,
 * "t_ns":t_ns}. Every string is escaped whole, never cut.
 */
char *watch_save_line(const char *domain, const char *path, int saved, const char *error,
		      const char *state_after, uint64_t t_ns);

#endif
