// SPDX-License-Identifier: GPL-2.0
#include "memory_failure_event.h"

#include <inttypes.h>
#include <stdio.h>

#include <libvirt/libvirt.h>

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

void mf_json_escape(char *out, size_t len, const char *name)
{
	size_t n = 0;

	for (; *name && n + 7 < len; name++) {
		unsigned char c = (unsigned char)*name;

		if (c == '"' || c == '\\')
			n += snprintf(out + n, len - n, "\\%c", c);
		else if (c < 0x20)
			n += snprintf(out + n, len - n, "\\u%04x", c);
		else
			out[n++] = c;
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
