// SPDX-License-Identifier: GPL-2.0
#include "ucall.h"

#include "poison_hook.h"
#include "report.h"
#include "ucall_decode.h"
#include "vm.h"

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
		.last_injected_gpa = v->mce.last_injected_gpa,
	};
	struct ucall_decoded d;
	int bad = ucall_decode(&v->vm->mem, (uint8_t *)v->run + v->run->io.data_offset, &ctx, &d);

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
	return 0;	/* UCALL_LOG, UCALL_RETIRED: reported, run on */
}
