/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Just enough QMP (QEMU's JSON monitor) to ask a running QEMU where a
 * guest-physical address lives in its memory: the HMP command gpa2hva,
 * through QMP's human-monitor-command. hwpoison-guest uses it to poison a
 * QEMU guest's page the way it poisons an hwlab-vmm one. libvirt's
 * virDomainQemuMonitorCommand() returns the same HMP text.
 */
#ifndef HWLAB_QMP_H
#define HWLAB_QMP_H

#include <stddef.h>
#include <stdint.h>

/*
 * The string value of "return" in one QMP reply line, unescaped (UTF-8); -1
 * if the line has no string "return" at its top (an error reply, an event,
 * a non-string return), is not JSON, or the string does not fit out or
 * holds a NUL. Pure.
 */
int qmp_return_string(const char *line, char *out, size_t len);

/* What one QMP line is, by its top-level members (QMP's spec). */
enum qmp_message {
	QMP_OTHER,	/* none of them, or not JSON */
	QMP_GREETING,	/* "QMP" */
	QMP_EVENT,	/* "event" */
	QMP_RETURN,	/* "return": a command's success */
	QMP_ERROR,	/* "error": its failure */
};

/* One QMP line's enum qmp_message: "return", then "error", "event", "QMP" win. Pure. */
int qmp_message_kind(const char *line);
/*
 * gpa2hva's answer, "Host virtual address for 0x1000 (pc.ram) is 0x7f...":
 * the HVA, checking that it answers for gpa; -1 otherwise (for instance
 * "Memory at address 0x... is not RAM"). Pure.
 */
int qmp_parse_gpa2hva(const char *text, uint64_t gpa, uint64_t *hva);
/*
 * The "thread-id" of the first CPU of a query-cpus-fast reply ("return"'s
 * first element): vCPU 0's thread, whose process is QEMU (libvirt has no
 * call for the emulator's pid). 0, or -1 when there is none or it is not a
 * plausible tid. Pure.
 */
int qmp_first_thread_id(const char *reply, long *tid);
/*
 * Connect to the QMP socket at path, leave capabilities negotiation, run
 * one HMP command and put its text in out. 0, or -1 with a message in err.
 */
int qmp_hmp(const char *path, const char *command, char *out, size_t len, char *err,
	    size_t err_len);

#endif
