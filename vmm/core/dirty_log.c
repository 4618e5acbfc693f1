// SPDX-License-Identifier: GPL-2.0
#include "core/dirty_log.h"

#include <stdlib.h>
#include <string.h>
#include <linux/kvm.h>

#include "core/kvm_ioctl.h"
#include "core/vm.h"
#include "hwlab_abi.h"
#include "log.h"

static int set_logging(struct vm *vm, int on)
{
	unsigned int i;

	for (i = 0; i < vm->mem.count; i++) {
		const struct memslot *s = &vm->mem.slots[i];
		struct kvm_userspace_memory_region region = {
			.slot = s->id,
			.flags = on ? KVM_MEM_LOG_DIRTY_PAGES : 0,
			.guest_phys_addr = s->gpa,
			.memory_size = s->size,
			.userspace_addr = (uintptr_t)s->hva,
		};

		if (kvm_ioctl(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &region) < 0)
			return -1;
	}
	return 0;
}

int dirty_log_start(struct vm *vm, struct dirty_log *d)
{
	unsigned int i;

	memset(d, 0, sizeof(*d));
	if (vm->mem.count > sizeof(d->bitmap) / sizeof(d->bitmap[0])) {
		pr_err("dirty log: %u memslots, more than it keeps", vm->mem.count);
		return -1;
	}
	d->nr_slots = vm->mem.count;
	for (i = 0; i < d->nr_slots; i++) {
		uint64_t pages = vm->mem.slots[i].size / GUEST_PAGE_SIZE;

		d->words[i] = (pages + 63) / 64;
		d->bitmap[i] = calloc(d->words[i], sizeof(uint64_t));
		if (!d->bitmap[i]) {
			pr_err("out of memory for the dirty log");
			return -1;
		}
	}
	return set_logging(vm, 1);
}

int dirty_log_stop(struct vm *vm, struct dirty_log *d)
{
	unsigned int i;

	for (i = 0; i < d->nr_slots; i++)
		free(d->bitmap[i]);
	memset(d, 0, sizeof(*d));
	return set_logging(vm, 0);
}

long dirty_log_fetch(struct vm *vm, struct dirty_log *d)
{
	unsigned int i;
	uint64_t w;
	long n = 0;

	for (i = 0; i < d->nr_slots; i++) {
		struct kvm_dirty_log log = { .slot = vm->mem.slots[i].id,
					     .dirty_bitmap = d->bitmap[i] };

		if (kvm_ioctl(vm->vm_fd, KVM_GET_DIRTY_LOG, &log) < 0)
			return -1;
		for (w = 0; w < d->words[i]; w++)
			n += __builtin_popcountll(d->bitmap[i][w]);
	}
	return n;
}
