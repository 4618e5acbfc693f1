// SPDX-License-Identifier: GPL-2.0
#include "machine.h"

#include <sys/prctl.h>

#include "boot/guest_boot.h"
#include "core/device.h"
#include "core/guest_ram.h"
#include "core/report.h"
#include "core/vm.h"
#include "hwlab/pin_hook.h"
#include "log.h"
#include "mce/mce.h"
#include "mce/mce_delivery.h"
#include "mce/sigbus.h"
#include "options.h"
#include "vcpu.h"

/*
 * The VM and what each layer adds to it, in the order KVM needs: the
 * guest kind's devices (its interrupt hardware) before the first vCPU.
 * 0, or -1 after a message.
 */
static int create_machine(struct vm *vm, const struct vmm_options *opt)
{
	if (mce_delivery_init_vm(vm) || vm_create(vm, opt) || mce_choose_style(vm) ||
	    guest_kind_create(vm))
		return -1;
	return guest_ram_create(vm);
}

int machine_setup(struct vm *vm, const struct vmm_options *opt, int *ao_fd,
		  int (*stopped)(void))
{
	unsigned int i;

	/* the guest's files first, before the VM exists: a bad path fails early */
	if (guest_kind_open(vm, opt) || create_machine(vm, opt) || guest_boot_load(vm) ||
	    pin_hook_setup(vm))
		return -1;
	for (i = 0; i < opt->nr_vcpus; i++)
		if (vcpu_create(vm, i))
			return -1;
	if (guest_kind_ready(vm))
		return -1;
	*ao_fd = sigbus_install(&vm->mem);
	if (*ao_fd < 0) {
		pr_errno("installing the SIGBUS handler");
		return -1;
	}
	/* Set on this thread only: it is the one the kernel sends AO to. */
	if (opt->mce_kill >= 0 && prctl(PR_MCE_KILL, PR_MCE_KILL_SET, opt->mce_kill, 0, 0)) {
		pr_errno("prctl(PR_MCE_KILL)");
		return -1;
	}
	/* last: nothing after it can fail and leave the table behind */
	return guest_ram_publish(vm, opt->memmap_path, stopped);
}

int machine_reset(struct vm *vm)
{
	uint64_t gpa[4], len[4];
	unsigned int i, n;

	vm->boot_count++;
	vm->stop = vm->reset_requested = 0;
	/* memory remaps from its own list; the MCE policy forgets what it told */
	mce_delivery_forget_notified(vm);
	n = guest_boot_areas(vm, gpa, len, 4);
	if (guest_ram_remap_poisoned(vm) || guest_ram_refresh_boot_area(vm, gpa, len, n) ||
	    guest_boot_load(vm))
		return -1;
	/* a reboot starts with the devices (the interrupt hardware) as at power-on */
	if (device_bus_reset(vm))
		return -1;
	for (i = 0; i < vm->opt->nr_vcpus; i++)
		if (vcpu_reset(&vm->vcpus[i]))
			return -1;
	report("reset", "\"boot\":%u", vm->boot_count);
	return 0;
}
