/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A ucall decoded without touching the VM: the GPA from the I/O exit, the
 * struct copied out of guest RAM, and the report line it becomes. Pure, so
 * that unit tests and a fuzzer can feed it any guest memory.
 */
#ifndef HWLAB_UCALL_DECODE_H
#define HWLAB_UCALL_DECODE_H

#include <stdint.h>

#include "hwlab_abi.h"
#include "core/memslot.h"

/* What the report line needs to know about the vCPU that made the ucall. */
struct ucall_context {
	unsigned int vcpu;
	unsigned int boot;
	int injected;			/* a machine check was injected (since the reset) */
	uint64_t last_injected_gpa;	/* and its address: guest_retired's "matches_injection" */
};

struct ucall_decoded {
	struct hwlab_ucall uc;	/* the copy, msg NUL-terminated; valid when 0 is returned */
	const char *event;	/* the report line's event */
	char members[512];	/* and its members, in JSON syntax (see report()) */
};

/*
 * io_data: the 4 bytes the guest wrote to UCALL_PORT, the GPA of its struct
 * hwlab_ucall. The whole struct must lie in one memslot. Returns 0 for a
 * known ucall, or -1 for a bad GPA or an unknown command; either way
 * out->event and out->members are the line to report (guest_fail on -1).
 */
int ucall_decode(const struct memslot_table *t, const uint8_t io_data[4],
		 const struct ucall_context *ctx, struct ucall_decoded *out);

#endif
