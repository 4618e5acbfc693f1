// SPDX-License-Identifier: GPL-2.0
#include "hwlab/ucall.h"

#include "clock.h"
#include "mce/mce_delivery.h"
#include "hwlab/poison_hook.h"
#include "core/report.h"
#include "hwlab/ucall_decode.h"
#include "core/vm.h"

/*
 * guest_log lines per vCPU: a burst, then a steady trickle. A guest that
 * logs in a loop once wrote 370k lines (53 MB) in 5 s; what is held back is
 * counted in a guest_log_suppressed line instead.
 */
#define GUEST_LOG_BURST		50
#define GUEST_LOG_PER_SEC	20

void ucall_init_vcpu(struct vcpu *v)
{
	ratelimit_init(&v->log_limit, GUEST_LOG_BURST, GUEST_LOG_PER_SEC, monotonic_ns());
}

void ucall_report_suppressed(struct vcpu *v)
{
	uint64_t n = ratelimit_take_suppressed(&v->log_limit);

	if (n)
		report("guest_log_suppressed", "\"vcpu\":%u,\"boot\":%u,\"count\":%llu", v->id,
		       v->vm->boot_count, (unsigned long long)n);
}

/*
 * The line, if the limit lets it through; the first one through after some
 * were held back comes after a guest_log_suppressed line counting them.
 */
static void report_guest_log(struct vcpu *v, const struct ucall_decoded *d)
{
	if (!ratelimit_allow(&v->log_limit, monotonic_ns()))
		return;
	ucall_report_suppressed(v);
	report(d->event, "%s", d->members);
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
	const struct ucall_context ctx = {
		.vcpu = v->id, .boot = v->vm->boot_count,
		.injected = v->mce->injected, .last_injected_gpa = v->mce->last_injected_gpa,
	};
	struct ucall_decoded d;
	int bad = ucall_decode(&v->vm->mem, (uint8_t *)v->run + v->run->io.data_offset, &ctx, &d);

	if (!bad && d.uc.cmd == UCALL_LOG) {
		report_guest_log(v, &d);
		return 0;
	}
	report(d.event, "%s", d.members);
	if (bad)
		return -1;
	switch (d.uc.cmd) {
	case UCALL_PASS:
		return poison_hook_due(v, &d.uc) ? poison_hook_run(v) : 0;
	case UCALL_DONE:
		v->state = d.uc.args[3] ? VCPU_FAILED : VCPU_DONE;
		return 1;
	case UCALL_FAIL:
		v->state = VCPU_FAILED;
		return 1;
	}
	return 0;	/* UCALL_RETIRED: reported, run on */
}
