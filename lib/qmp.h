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
 * The string value of "return" in one QMP reply line, unescaped; -1 if the
 * line has no string "return" (an error reply, an event, a non-string
 * return). Pure.
 */
int qmp_return_string(const char *line, char *out, size_t len);
/*
 * gpa2hva's answer, "Host virtual address for 0x1000 (pc.ram) is 0x7f...":
 * the HVA, checking that it answers for gpa; -1 otherwise (for instance
 * "Memory at address 0x... is not RAM"). Pure.
 */
int qmp_parse_gpa2hva(const char *text, uint64_t gpa, uint64_t *hva);
/*
 * The first "thread-id" in a query-cpus-fast reply: vCPU 0's thread, whose
 * process is QEMU (libvirt has no call for the emulator's pid). 0, or -1
 * when there is none or it is not a plausible tid. Pure.
 */
int qmp_first_thread_id(const char *reply, long *tid);
/*
 * Connect to the QMP socket at path, leave capabilities negotiation, run
 * one HMP command and put its text in out. 0, or -1 with a message in err.
 */
int qmp_hmp(const char *path, const char *command, char *out, size_t len, char *err,
	    size_t err_len);

#endif
