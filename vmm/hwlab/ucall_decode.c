// SPDX-License-Identifier: GPL-2.0
#include "hwlab/ucall_decode.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/report.h"

static int line(struct ucall_decoded *out, const char *event, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int line(struct ucall_decoded *out, const char *event, const char *fmt, ...)
{
	va_list ap;

	out->event = event;
	va_start(ap, fmt);
	vsnprintf(out->members, sizeof(out->members), fmt, ap);
	va_end(ap);
	return 0;
}

/*
 * The guest is not trusted: copy the struct out of guest RAM (another vCPU
 * may be rewriting it) and terminate the copy, then look only at the copy.
 * memslot_copy_out() checks that all of [gpa, gpa + sizeof) is in one slot,
 * and copies without a load from a page that may be poisoned.
 */
static int fetch_ucall(const struct memslot_table *t, const uint8_t io_data[4],
		       const struct ucall_context *ctx, struct ucall_decoded *out)
{
	uint32_t gpa;

	memcpy(&gpa, io_data, sizeof(gpa));
	switch (memslot_copy_out(t, gpa, &out->uc, sizeof(out->uc))) {
	case MEMSLOT_NOT_IN_RAM:
		line(out, "guest_fail", "\"vcpu\":%u,\"reason\":\"ucall at bad GPA %#x\"",
		     ctx->vcpu, gpa);
		return -1;
	case MEMSLOT_UNREADABLE:
		line(out, "guest_fail", "\"vcpu\":%u,\"reason\":\"ucall at GPA %#x, which cannot "
		     "be read (poisoned memory)\"", ctx->vcpu, gpa);
		return -1;
	case MEMSLOT_COPIED:
		break;
	}
	out->uc.msg[UCALL_MSG_LEN - 1] = 0;
	return 0;
}

int ucall_decode(const struct memslot_table *t, const uint8_t io_data[4],
		 const struct ucall_context *ctx, struct ucall_decoded *out)
{
	const struct hwlab_ucall *uc = &out->uc;
	char msg[2 * UCALL_MSG_LEN];
	unsigned long long a[5];
	unsigned int i;

	if (fetch_ucall(t, io_data, ctx, out))
		return -1;
	json_escape(msg, sizeof(msg), uc->msg);
	for (i = 0; i < 5; i++)
		a[i] = uc->args[i];
	switch (uc->cmd) {
	case UCALL_LOG:
		return line(out, "guest_log", "\"vcpu\":%u,\"boot\":%u,\"msg\":\"%s\"", ctx->vcpu,
			    ctx->boot, msg);
	case UCALL_RETIRED:
		return line(out, "guest_retired",
			    "\"vcpu\":%u,\"gpa\":\"%#llx\",\"pages\":%llu,\"mci_status\":\"%#llx\","
			    "\"mcg_status\":\"%#llx\",\"bank\":%llu,\"matches_injection\":%s",
			    ctx->vcpu, a[0], a[1], a[2], a[3], a[4],
			    ctx->injected && uc->args[0] == ctx->last_injected_gpa ?
			    "true" : "false");
	case UCALL_PASS:
		return line(out, "guest_pass",
			    "\"vcpu\":%u,\"pass\":%llu,\"pages_checked\":%llu,\"pages_retired\":%llu,"
			    "\"errors\":%llu", ctx->vcpu, a[0], a[1], a[2], a[3]);
	case UCALL_DONE:
		return line(out, "guest_done",
			    "\"vcpu\":%u,\"boot\":%u,\"passes\":%llu,\"pages_checked\":%llu,"
			    "\"pages_retired\":%llu,\"errors\":%llu,\"checksum_ok\":%s",
			    ctx->vcpu, ctx->boot, a[0], a[1], a[2], a[3], a[3] ? "false" : "true");
	case UCALL_FAIL:
		/* msg is "file:line: what" (GUEST_FAIL in guest/guest.c) */
		return line(out, "guest_fail",
			    "\"vcpu\":%u,\"reason\":\"%s\",\"vector\":%llu,\"rip\":\"%#llx\","
			    "\"mcg_status\":\"%#llx\",\"mci_status\":\"%#llx\"",
			    ctx->vcpu, msg, a[0], a[1], a[2], a[3]);
	case UCALL_MC_BROADCAST:
		return line(out, "guest_mc_broadcast",
			    "\"vcpu\":%u,\"boot\":%u,\"mci_status\":\"%#llx\",\"mcg_status\":\"%#llx\","
			    "\"bank\":%llu", ctx->vcpu, ctx->boot, a[0], a[1], a[2]);
	}
	line(out, "guest_fail", "\"vcpu\":%u,\"reason\":\"unknown ucall %llu\"", ctx->vcpu,
	     (unsigned long long)uc->cmd);
	return -1;
}
