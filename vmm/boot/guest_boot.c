// SPDX-License-Identifier: GPL-2.0
#include "boot/guest_boot.h"

#include "boot/linux_boot.h"
#include "boot/x86_boot.h"
#include "core/vm.h"

struct guest_boot_ops {
	int (*load)(struct vm *vm);
	int (*reset_vcpu)(struct vcpu *v);
	unsigned int (*areas)(const struct vm *vm, uint64_t *gpa, uint64_t *len, unsigned int max);
};

static const struct guest_boot_ops guest_boot_ops[] = {
	[GUEST_KIND_HWLAB] = { x86_boot_load_elf_guest, x86_boot_reset_elf_vcpu, x86_boot_elf_areas },
	[GUEST_KIND_LINUX] = { linux_boot_load, linux_boot_reset_vcpu, linux_boot_areas },
};

int guest_boot_load(struct vm *vm)
{
	return guest_boot_ops[vm->kind].load(vm);
}

int guest_boot_reset_vcpu(struct vcpu *v)
{
	return guest_boot_ops[v->vm->kind].reset_vcpu(v);
}

unsigned int guest_boot_areas(const struct vm *vm, uint64_t *gpa, uint64_t *len, unsigned int max)
{
	return guest_boot_ops[vm->kind].areas(vm, gpa, len, max);
}
