// SPDX-License-Identifier: GPL-2.0
#include "ucall.h"

#include <string.h>

#include "poison_hook.h"
#include "report.h"
#include "vm.h"

/*
 * The guest is not trusted: copy the struct out of guest RAM (another vCPU
 * may be rewriting it) and terminate the copy, then look only at the copy.
 */
static int fetch_ucall(struct vcpu *v, struct hwlab_ucall *uc)
{
	uint32_t gpa;
	const void *src;

	memcpy(&gpa, (uint8_t *)v->run + v->run->io.data_offset, sizeof(gpa));
	src = memslot_gpa_to_hva(&v->vm->mem, gpa, sizeof(*uc));
	if (!src) {
		report("guest_fail", "\"vcpu\":%u,\"reason\":\"ucall at bad GPA %#x\"", v->id, gpa);
		return -1;
	}
	memcpy(uc, src, sizeof(*uc));
	uc->msg[UCALL_MSG_LEN - 1] = 0;
	return 0;
}

static int poison_hook_due(const struct vcpu *v, const struct hwlab_ucall *uc)
{
	const struct vmm_options *opt = v->vm->opt;

	/* Only on the first boot: a reset guest runs on fresh memory. */
	return v->id == 0 && v->vm->boot_count == 1 && uc->args[0] == opt->poison_pass &&
	       (opt->nr_poison || opt->poison_vmm_heap);
}

int ucall_handle(struct vcpu *v)
{
	struct hwlab_ucall uc;
	char msg[2 * UCALL_MSG_LEN];
	unsigned long long a[5];
	unsigned int i;

	if (fetch_ucall(v, &uc))
		return -1;
	json_escape(msg, sizeof(msg), uc.msg);
	for (i = 0; i < 5; i++)
		a[i] = uc.args[i];
	switch (uc.cmd) {
	case UCALL_LOG:
		report("guest_log", "\"vcpu\":%u,\"boot\":%u,\"msg\":\"%s\"", v->id,
		       v->vm->boot_count, msg);
		return 0;
	case UCALL_RETIRED:
		report("guest_retired",
		       "\"vcpu\":%u,\"gpa\":\"%#llx\",\"pages\":%llu,\"mci_status\":\"%#llx\","
		       "\"mcg_status\":\"%#llx\",\"bank\":%llu,\"matches_injection\":%s",
		       v->id, a[0], a[1], a[2], a[3], a[4],
		       uc.args[0] == v->mce.last_injected_gpa ? "true" : "false");
		return 0;
	case UCALL_PASS:
		report("guest_pass",
		       "\"vcpu\":%u,\"pass\":%llu,\"pages_checked\":%llu,\"pages_retired\":%llu,"
		       "\"errors\":%llu", v->id, a[0], a[1], a[2], a[3]);
		return poison_hook_due(v, &uc) ? poison_hook_run(v) : 0;
	case UCALL_DONE:
		report("guest_done",
		       "\"vcpu\":%u,\"boot\":%u,\"passes\":%llu,\"pages_checked\":%llu,"
		       "\"pages_retired\":%llu,\"errors\":%llu,\"checksum_ok\":%s",
		       v->id, v->vm->boot_count, a[0], a[1], a[2], a[3], a[3] ? "false" : "true");
		v->state = a[3] ? VCPU_FAILED : VCPU_DONE;
		return 1;
	case UCALL_FAIL:
		/* msg is "file:line: what" (GUEST_FAIL in guest/guest.c) */
		report("guest_fail",
		       "\"vcpu\":%u,\"reason\":\"%s\",\"vector\":%llu,\"rip\":\"%#llx\","
		       "\"mcg_status\":\"%#llx\",\"mci_status\":\"%#llx\"",
		       v->id, msg, a[0], a[1], a[2], a[3]);
		v->state = VCPU_FAILED;
		return 1;
	}
	report("guest_fail", "\"vcpu\":%u,\"reason\":\"unknown ucall %llu\"", v->id,
	       (unsigned long long)uc.cmd);
	return -1;
}
