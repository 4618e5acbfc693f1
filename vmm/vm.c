// SPDX-License-Identifier: GPL-2.0
/* VM creation, guest RAM and what the guest finds in it at boot. */
#define _GNU_SOURCE
#include "vmm.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "elf_load.h"
#include "report.h"

#define SZ_2M (2ULL << 20)
#ifndef MAP_HUGE_2MB
#define MAP_HUGE_2MB (21 << 26)
#endif

static int cpu_has_virt_flag(void)
{
	char line[4096];
	int found = -1;	/* unknown */
	FILE *f = fopen("/proc/cpuinfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5))
			continue;
		found = strstr(line, " svm") || strstr(line, " vmx");
		break;
	}
	fclose(f);
	return found;
}

int kvm_open_checked(char *err, unsigned long errlen)
{
	int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	int version;

	if (fd < 0) {
		int e = errno;

		if (e == ENOENT && cpu_has_virt_flag() == 0)
			snprintf(err, errlen, "/dev/kvm does not exist and the CPU has neither svm "
				 "nor vmx: no hardware virtualization here");
		else if (e == ENOENT)
			snprintf(err, errlen, "/dev/kvm does not exist: load kvm_amd or kvm_intel");
		else
			snprintf(err, errlen, "cannot open /dev/kvm: %s", strerror(e));
		return -1;
	}
	version = ioctl(fd, KVM_GET_API_VERSION, 0);
	if (version != KVM_API_VERSION) {
		snprintf(err, errlen, "KVM API version %d, expected %d", version, KVM_API_VERSION);
		close(fd);
		return -1;
	}
	return fd;
}

static void *map_guest_ram(uint64_t size, enum memslot_backing backing, void *at)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | (at ? MAP_FIXED : 0);
	uint8_t *p;

	if (backing == BACKING_HUGETLB)
		return mmap(at, size, PROT_READ | PROT_WRITE, flags | MAP_HUGETLB | MAP_HUGE_2MB,
			    -1, 0);
	if (backing == BACKING_ANON || at)
		return mmap(at, size, PROT_READ | PROT_WRITE, flags, -1, 0);
	/* THP: a 2 MiB-aligned range, so whole huge pages can back it. */
	p = mmap(NULL, size + SZ_2M, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (p == MAP_FAILED)
		return p;
	{
		uint8_t *aligned = (uint8_t *)(((uintptr_t)p + SZ_2M - 1) & ~(SZ_2M - 1));

		if (aligned > p)
			munmap(p, aligned - p);
		munmap(aligned + size, p + size + SZ_2M - (aligned + size));
		if (madvise(aligned, size, MADV_HUGEPAGE))
			fprintf(stderr, "hwlab-vmm: warning: madvise(MADV_HUGEPAGE): %s\n",
				strerror(errno));
		return aligned;
	}
}

static int set_cpuid(struct vm *vm)
{
	int n = 128;

	for (;;) {
		struct kvm_cpuid2 *c = calloc(1, sizeof(*c) + n * sizeof(c->entries[0]));

		if (!c)
			return -1;
		c->nent = n;
		if (!ioctl(vm->kvm_fd, KVM_GET_SUPPORTED_CPUID, c)) {
			vm->cpuid = c;
			return 0;
		}
		free(c);
		if (errno != E2BIG || n > 4096)
			return -1;
		n *= 2;
	}
}

int vm_create(struct vm *vm, const struct vmm_options *opt)
{
	char err[256];
	uint64_t slot_size;
	unsigned int i;

	vm->opt = opt;
	vm->boot_count = 1;
	pthread_mutex_init(&vm->poison_lock, NULL);
	vm->kvm_fd = kvm_open_checked(err, sizeof(err));
	if (vm->kvm_fd < 0) {
		fprintf(stderr, "hwlab-vmm: error: %s\n", err);
		return -1;
	}
	vm->vm_fd = ioctl(vm->kvm_fd, KVM_CREATE_VM, 0);
	if (vm->vm_fd < 0) {
		fprintf(stderr, "hwlab-vmm: error: KVM_CREATE_VM: %s\n", strerror(errno));
		return -1;
	}
	vm->run_size = ioctl(vm->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (vm->run_size <= 0 || set_cpuid(vm)) {
		fprintf(stderr, "hwlab-vmm: error: KVM_GET_VCPU_MMAP_SIZE/SUPPORTED_CPUID failed\n");
		return -1;
	}

	slot_size = opt->mem_size / opt->nr_slots;
	for (i = 0; i < opt->nr_slots; i++) {
		struct memslot *s = &vm->mem.slots[i];
		struct kvm_userspace_memory_region region;

		s->id = i;
		s->gpa = i * slot_size;
		s->size = slot_size;
		s->backing = opt->backing;
		s->hva = map_guest_ram(slot_size, opt->backing, NULL);
		if (s->hva == MAP_FAILED) {
			fprintf(stderr, "hwlab-vmm: error: cannot map %llu MiB of %s guest RAM: %s%s\n",
				(unsigned long long)(slot_size >> 20),
				memslot_backing_name(opt->backing), strerror(errno),
				opt->backing == BACKING_HUGETLB ?
				" (reserve 2 MiB pages: echo N > /proc/sys/vm/nr_hugepages)" : "");
			return -1;
		}
		region = (struct kvm_userspace_memory_region) {
			.slot = i,
			.guest_phys_addr = s->gpa,
			.memory_size = s->size,
			.userspace_addr = (uintptr_t)s->hva,
		};
		if (ioctl(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &region)) {
			fprintf(stderr, "hwlab-vmm: error: KVM_SET_USER_MEMORY_REGION: %s\n",
				strerror(errno));
			return -1;
		}
		vm->mem.count++;
	}
	return 0;
}

static void *gpa(struct vm *vm, uint64_t addr, uint64_t len)
{
	return memslot_gpa_to_hva(&vm->mem, addr, len);
}

/* Identity map of the low 4 GiB with 2 MiB pages, and a flat 64-bit GDT. */
static void write_boot_structures(struct vm *vm)
{
	uint64_t *pml4 = gpa(vm, GUEST_PML4_GPA, 4096);
	uint64_t *pdpt = gpa(vm, GUEST_PDPT_GPA, 4096);
	uint64_t *pd = gpa(vm, GUEST_PD_GPA, 4 * 4096);
	uint64_t *gdt = gpa(vm, GUEST_GDT_GPA, 4 * 8);
	struct hwlab_boot_info *bi = gpa(vm, GUEST_BOOT_INFO_GPA, sizeof(*bi));
	unsigned int i;

	memset(pml4, 0, 4096);
	memset(pdpt, 0, 4096);
	pml4[0] = GUEST_PDPT_GPA | 3;			/* present, writable */
	for (i = 0; i < 4; i++)
		pdpt[i] = (GUEST_PD_GPA + i * 4096) | 3;
	for (i = 0; i < 4 * 512; i++)
		pd[i] = ((uint64_t)i << 21) | 0x83;	/* present, writable, 2 MiB */

	gdt[0] = 0;
	gdt[1] = 0x00af9b000000ffffULL;		/* GUEST_SEL_CODE: 64-bit code */
	gdt[2] = 0x00cf93000000ffffULL;		/* GUEST_SEL_DATA */
	gdt[3] = 0x00008b0000000067ULL;		/* busy TSS, base 0 */

	memset(bi, 0, sizeof(*bi));
	bi->magic = HWLAB_BOOT_MAGIC;
	bi->ram_size = vm->opt->mem_size;
	bi->workset_gpa = GUEST_WORKSET_GPA;
	bi->workset_size = vm->opt->mem_size - GUEST_WORKSET_GPA;
	bi->nr_vcpus = vm->opt->nr_vcpus;
	bi->passes = vm->opt->passes;
	bi->flags = (vm->opt->guest_no_mce ? HWLAB_BOOT_NO_MCE : 0) |
		    (vm->opt->guest_keep_mcip ? HWLAB_BOOT_KEEP_MCIP : 0) |
		    (vm->opt->guest_retry_ar ? HWLAB_BOOT_RETRY_AR : 0);
	bi->boot_count = vm->boot_count;
}

int vm_load_guest(struct vm *vm)
{
	char err[256];

	if (!vm->image) {
		FILE *f = fopen(vm->opt->image_path, "rb");
		long size;

		if (!f) {
			fprintf(stderr, "hwlab-vmm: error: cannot open guest image %s: %s\n",
				vm->opt->image_path, strerror(errno));
			return -1;
		}
		fseek(f, 0, SEEK_END);
		size = ftell(f);
		rewind(f);
		vm->image = malloc(size > 0 ? size : 1);
		if (size < 0 || !vm->image || fread(vm->image, 1, size, f) != (size_t)size) {
			fprintf(stderr, "hwlab-vmm: error: cannot read guest image %s\n",
				vm->opt->image_path);
			fclose(f);
			return -1;
		}
		fclose(f);
		vm->image_size = size;
	}
	write_boot_structures(vm);
	if (elf_load(&vm->mem, vm->image, vm->image_size, &vm->entry, err, sizeof(err))) {
		fprintf(stderr, "hwlab-vmm: error: malformed guest image %s: %s\n",
			vm->opt->image_path, err);
		return -1;
	}
	return 0;
}

/*
 * What QEMU does on guest reset (kvm_unpoison_all): give every poisoned page
 * fresh memory at the same address, so the rebooted guest can use it. The
 * old, poisoned physical page stays isolated in the host kernel.
 */
int vm_remap_poisoned(struct vm *vm)
{
	unsigned int i;

	for (i = 0; i < vm->poison.count; i++) {
		uint64_t g = vm->poison.gpas[i];
		const struct memslot *s = NULL;
		uint64_t unit = 4096;
		unsigned int k;
		void *hva;

		for (k = 0; k < vm->mem.count; k++)
			if (g >= vm->mem.slots[k].gpa && g - vm->mem.slots[k].gpa < vm->mem.slots[k].size)
				s = &vm->mem.slots[k];
		if (!s)
			continue;
		if (s->backing == BACKING_HUGETLB)
			unit = SZ_2M;
		g &= ~(unit - 1);
		hva = s->hva + (g - s->gpa);
		if (map_guest_ram(unit, s->backing == BACKING_HUGETLB ? BACKING_HUGETLB :
				  BACKING_ANON, hva) == MAP_FAILED) {
			fprintf(stderr, "hwlab-vmm: error: remapping poisoned GPA %#llx: %s\n",
				(unsigned long long)g, strerror(errno));
			return -1;
		}
		report("remap", "\"gpa\":\"%#llx\",\"bytes\":%llu",
		       (unsigned long long)g, (unsigned long long)unit);
	}
	poison_list_clear(&vm->poison);
	poison_list_clear(&vm->notified);
	return 0;
}

/* The memslot table, for tools that poison guest memory from outside. */
int vm_write_memmap(const struct vm *vm, const char *path)
{
	FILE *f = fopen(path, "w");
	unsigned int i;

	if (!f) {
		fprintf(stderr, "hwlab-vmm: error: cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	fprintf(f, "# pid %d\n# slot gpa size hva backing\n", getpid());
	for (i = 0; i < vm->mem.count; i++) {
		const struct memslot *s = &vm->mem.slots[i];

		fprintf(f, "%u %#llx %#llx %#llx %s\n", s->id, (unsigned long long)s->gpa,
			(unsigned long long)s->size, (unsigned long long)(uintptr_t)s->hva,
			memslot_backing_name(s->backing));
	}
	return fclose(f);
}

void vm_kick_all(struct vm *vm)
{
	unsigned int i;

	for (i = 0; i < vm->opt->nr_vcpus; i++)
		if (vm->vcpus[i].thread)
			pthread_kill(vm->vcpus[i].thread, SIG_VCPU_KICK);
}
