// SPDX-License-Identifier: GPL-2.0
#include "vcpu_stuck.h"

#include <stdio.h>
#include <string.h>

#include "core/report.h"
#include "core/vm.h"
#include "mce/sigbus.h"

/*
 * One field of /proc/self/task/TID/NAME by a scanf format that fills a char
 * array of at most 63 characters; "?" if the file or the field is missing.
 * A quote or backslash ends the text: it goes into a report line.
 */
static void task_field(int tid, const char *name, const char *fmt, char out[64])
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/%s", tid, name);
	f = fopen(path, "r");
	if (!f || fscanf(f, fmt, out) != 1)
		strcpy(out, "?");
	if (f)
		fclose(f);
	out[strcspn(out, "\"\\")] = 0;
	if (!out[0])
		strcpy(out, "?");
}

void report_stuck_vcpus(struct vm *vm)
{
	unsigned int i;

	for (i = 0; i < vm->opt->nr_vcpus; i++) {
		struct vcpu *v = &vm->vcpus[i];
		char wchan[64], state[64], syscall_nr[64];

		if (__atomic_load_n(&v->state, __ATOMIC_ACQUIRE) != VCPU_RUNNING)
			continue;
		task_field(v->tid, "wchan", "%63s", wchan);
		/* "tid (comm) S ...": the comm is ours (hwlab-vmm), no ')' inside */
		task_field(v->tid, "stat", "%*d (%*[^)]) %1s", state);
		task_field(v->tid, "syscall", "%63s", syscall_nr);
		report("vcpu_stuck", "\"vcpu\":%u,\"tid\":%d,\"in_kvm_run\":%d,\"state\":\"%s\","
		       "\"wchan\":\"%s\",\"syscall\":\"%s\",\"reason\":\"still running %llu s after the stop\"",
		       i, v->tid, (int)v->sig->in_kvm_run, state, wchan, syscall_nr,
		       STOP_GRACE_NS / 1000000000ULL);
	}
}
