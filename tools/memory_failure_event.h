/* SPDX-License-Identifier: GPL-2.0 */
/*
 * QEMU's MEMORY_FAILURE event (qapi/run-state.json) as libvirt delivers it
 * (VIR_DOMAIN_EVENT_ID_MEMORY_FAILURE), written as one report line in the
 * vocabulary of hwlab-vmm's sigbus lines: recipient (hypervisor|guest),
 * action (ignore|inject|fatal|reset), action_required, recursive. One
 * reader then takes both VMMs' lines. Pure; libvirt's header only for its
 * enums, no libvirt call.
 */
#ifndef HWLAB_MEMORY_FAILURE_EVENT_H
#define HWLAB_MEMORY_FAILURE_EVENT_H

#include <stddef.h>
#include <stdint.h>

/* the names QEMU uses; NULL for a number libvirt did not have in 9.0 */
const char *mf_recipient_name(int recipient);
const char *mf_action_name(int action);
/* name as the body of a JSON string (libvirt allows quotes and backslashes in names) */
void mf_json_escape(char *out, size_t len, const char *name);
/*
 * The line, with t_ns (CLOCK_MONOTONIC, when the event reached us), into
 * out. An unknown recipient or action is written as its number ("unknown:N"),
 * not dropped: a newer libvirt may add one. Returns snprintf's count.
 */
int mf_format(char *out, size_t len, const char *domain, int recipient, int action,
	      unsigned int flags, uint64_t t_ns);

#endif
