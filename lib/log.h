/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Error and warning messages for hwlab-vmm and the tools: one format,
 * "PROGRAM: error: what failed: why", on stderr. Report lines (JSON, stdout)
 * are the VMM's business (vmm/core/report.h); this is for people. Every
 * message is escaped whole (escape.h): printable ASCII kept, any other byte
 * as \xNN, so a name or a reply a peer chose cannot move the terminal.
 */
#ifndef HWLAB_LOG_H
#define HWLAB_LOG_H

/* Set once by main(); prefixes every message. */
extern const char *log_prog;

void pr_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* pr_err() with ": strerror(errno)" appended; errno is preserved. */
void pr_errno(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "PROGRAM: what", without a level: a tool's note or refusal, escaped the same */
void pr_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/*
 * A small tool's last word, without a level (its callers parse it):
 * "PROGRAM: what" and, given a synopsis, "usage: PROGRAM SYNOPSIS" on
 * stderr, then exit(status).
 */
void tool_exit(int status, const char *synopsis, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), noreturn));

#endif
