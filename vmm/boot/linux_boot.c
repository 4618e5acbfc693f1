// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include "boot/linux_boot.h"

#include <stdio.h>
#include <string.h>
#include <asm/bootparam.h>
#include <linux/kvm.h>

#include "boot/bzimage.h"
#include "boot/guest_boot.h"
#include "core/kvm_ioctl.h"
#include "log.h"
#include "x86/mptable.h"
#include "core/vm.h"
#include "boot/x86_boot.h"

#define E820_RAM		1
#define E820_RESERVED		2
#define BIOS_AREA_END		0x100000ULL
#define LOADER_TYPE_UNDEFINED	0xff	/* "a boot loader without an assigned id" */
#define APIC_BASE_MSR_ENABLE	(1ULL << 11)
#define APIC_BASE_MSR_BSP	(1ULL << 8)

unsigned int linux_boot_e820(uint64_t mem_size, struct e820_range *out, unsigned int max)
{
	unsigned int n = 0;

	if (max < 3 || mem_size <= BIOS_AREA_END)
		return 0;
	out[n++] = (struct e820_range) { 0, LINUX_LOW_RAM_END, E820_RAM };
	/* the MP table, and where firmware would be: never RAM to the kernel */
	out[n++] = (struct e820_range) { LINUX_LOW_RAM_END, BIOS_AREA_END - LINUX_LOW_RAM_END,
					 E820_RESERVED };
	out[n++] = (struct e820_range) { BIOS_AREA_END, mem_size - BIOS_AREA_END, E820_RAM };
	return n;
}

unsigned int linux_boot_cmdline_max(uint32_t cmdline_size)
{
	/* 0 is no limit of the kernel's (none given), not "at most 0" */
	if (cmdline_size && cmdline_size < LINUX_CMDLINE_MAX - 1)
		return cmdline_size;
	return LINUX_CMDLINE_MAX - 1;
}

int linux_boot_place_initrd(uint64_t mem_size, uint32_t initrd_addr_max, uint64_t lowest,
			    uint64_t size, uint64_t *gpa, char *err, size_t errlen)
{
	uint64_t top = mem_size;
	int capped = initrd_addr_max && top > (uint64_t)initrd_addr_max + 1;

	if (capped)
		top = (uint64_t)initrd_addr_max + 1;
	if (size <= top && ((top - size) & ~0xfffULL) >= lowest) {
		*gpa = (top - size) & ~0xfffULL;
		return 0;
	}
	if (capped)
		/* more RAM would not help: the kernel's own limit is what is short */
		snprintf(err, errlen, "%llu bytes do not fit between %#llx, where the kernel "
			 "decompresses and runs, and its initrd_addr_max %#llx: a smaller "
			 "initrd", (unsigned long long)size, (unsigned long long)lowest,
			 (unsigned long long)initrd_addr_max);
	else
		snprintf(err, errlen, "%llu bytes do not fit in guest RAM above the kernel "
			 "(which needs up to %#llx): give the guest more --mem",
			 (unsigned long long)size, (unsigned long long)lowest);
	return -1;
}

/*
 * The initrd goes as high as the kernel allows, page-aligned, but above
 * everything the kernel claims while it decompresses and runs
 * (CONFIG_PHYSICAL_START + init_size): the boot protocol leaves the
 * placement to the loader, and a clash shows only as a corrupt initrd.
 */
static int place_initrd(const struct vm *vm, const struct bzimage *bz, uint64_t *gpa)
{
	uint64_t lowest = LINUX_PHYSICAL_START + bz->hdr.init_size;
	char err[256];

	if (LINUX_KERNEL_GPA + bz->kernel_size > lowest)
		lowest = LINUX_KERNEL_GPA + bz->kernel_size;
	if (linux_boot_place_initrd(vm->opt->mem_size, bz->hdr.initrd_addr_max, lowest,
				    vm->guest->initrd.size, gpa, err, sizeof(err))) {
		pr_err("initrd %s: %s", vm->guest->initrd.path, err);
		return -1;
	}
	return 0;
}

static int write_gdt(struct vm *vm)
{
	uint64_t gdt[LINUX_GDT_ENTRIES] = {
		[LINUX_SEL_CODE / 8] = X86_GDT_CODE64,
		[LINUX_SEL_DATA / 8] = X86_GDT_DATA,
		[LINUX_SEL_TSS / 8] = X86_GDT_TSS_BUSY,
	};

	return memslot_write(&vm->mem, GUEST_GDT_GPA, gdt, sizeof(gdt));
}

/* CPUID.1 for the MP table's processor entries. */
static struct mptable_cpu mptable_cpu_of(const struct vm *vm)
{
	struct mptable_cpu c = { 0 };
	unsigned int i;

	for (i = 0; i < vm->cpuid->nent; i++)
		if (vm->cpuid->entries[i].function == 1) {
			c.signature = vm->cpuid->entries[i].eax;
			c.features = vm->cpuid->entries[i].edx;
		}
	return c;
}

static int write_mptable(struct vm *vm)
{
	uint8_t buf[1024];
	struct mptable_cpu cpu = mptable_cpu_of(vm);
	size_t n = mptable_write(buf, sizeof(buf), LINUX_MPTABLE_GPA, vm->opt->nr_vcpus, &cpu);

	if (!n || n > BIOS_AREA_END - LINUX_MPTABLE_GPA) {
		pr_err("no room for the MP table of %u vCPUs", vm->opt->nr_vcpus);
		return -1;
	}
	return memslot_write(&vm->mem, LINUX_MPTABLE_GPA, buf, n);
}

int linux_boot_load(struct vm *vm)
{
	static struct boot_params zero_page;
	const struct vmm_options *opt = vm->opt;
	struct boot_params *bp = &zero_page;
	struct e820_range e820[8];
	struct bzimage bz;
	char err[256];
	size_t cmdline_len = strlen(opt->append) + 1;
	unsigned int cmdline_max;
	unsigned int i, n;
	uint64_t initrd_gpa = 0;

	if (bzimage_parse(vm->guest->image.data, vm->guest->image.size, &bz, err, sizeof(err))) {
		pr_err("malformed kernel %s: %s", vm->guest->image.path, err);
		return -1;
	}
	cmdline_max = linux_boot_cmdline_max(bz.hdr.cmdline_size);
	if (cmdline_len - 1 > cmdline_max) {
		pr_err("--append: %zu bytes, the kernel takes at most %u", cmdline_len - 1,
		       cmdline_max);
		return -1;
	}
	if (LINUX_PHYSICAL_START + bz.hdr.init_size > opt->mem_size) {
		pr_err("kernel %s needs RAM up to %#llx to decompress (init_size %#x): give the guest "
		       "more --mem", vm->guest->image.path,
		       (unsigned long long)(LINUX_PHYSICAL_START + bz.hdr.init_size),
		       bz.hdr.init_size);
		return -1;
	}
	if (vm->guest->initrd.data && place_initrd(vm, &bz, &initrd_gpa))
		return -1;

	memset(bp, 0, sizeof(*bp));
	memcpy(&bp->hdr, &bz.hdr, bz.hdr_len);
	bp->hdr.type_of_loader = LOADER_TYPE_UNDEFINED;
	bp->hdr.cmd_line_ptr = LINUX_CMDLINE_GPA;
	bp->hdr.ramdisk_image = initrd_gpa;
	bp->hdr.ramdisk_size = vm->guest->initrd.size;
	n = linux_boot_e820(opt->mem_size, e820, sizeof(e820) / sizeof(e820[0]));
	for (i = 0; i < n; i++)
		bp->e820_table[i] = (struct boot_e820_entry) {
			.addr = e820[i].addr, .size = e820[i].size, .type = e820[i].type,
		};
	bp->e820_entries = n;

	if (x86_boot_write_page_tables(vm) || write_gdt(vm) || write_mptable(vm) ||
	    memslot_write(&vm->mem, LINUX_BOOT_PARAMS_GPA, bp, sizeof(*bp)) ||
	    memslot_write(&vm->mem, LINUX_CMDLINE_GPA, opt->append, cmdline_len) ||
	    memslot_write(&vm->mem, LINUX_KERNEL_GPA, vm->guest->image.data + bz.kernel_offset,
			  bz.kernel_size) ||
	    (vm->guest->initrd.data &&
	     memslot_write(&vm->mem, initrd_gpa, vm->guest->initrd.data, vm->guest->initrd.size))) {
		pr_err("the kernel's boot layout does not fit in guest RAM of %llu MiB",
		       (unsigned long long)(opt->mem_size >> 20));
		return -1;
	}
	vm->guest->kernel_end = LINUX_KERNEL_GPA + bz.kernel_size;
	vm->guest->initrd_gpa = initrd_gpa;
	/* the 64-bit entry is 0x200 past the start of the protected-mode kernel */
	vm->entry = LINUX_KERNEL_GPA + 0x200;
	return 0;
}

int linux_boot_reset_vcpu(struct vcpu *v)
{
	struct x86_long_mode_entry e = {
		.code_sel = LINUX_SEL_CODE, .data_sel = LINUX_SEL_DATA, .tss_sel = LINUX_SEL_TSS,
		.gdt_entries = LINUX_GDT_ENTRIES, .rip = v->vm->entry, .rsi = LINUX_BOOT_PARAMS_GPA,
		.apic_base = MPTABLE_LAPIC_GPA | APIC_BASE_MSR_ENABLE | APIC_BASE_MSR_BSP,
	};
	struct kvm_mp_state mp = { .mp_state = KVM_MP_STATE_RUNNABLE };

	if (v->id != 0) {
		/* an AP: the kernel starts it with INIT/SIPI through the local APIC */
		struct kvm_sregs sregs;

		mp.mp_state = KVM_MP_STATE_UNINITIALIZED;
		if (vcpu_ioctl(v, KVM_GET_SREGS, &sregs) < 0)
			return -1;
		sregs.apic_base = MPTABLE_LAPIC_GPA | APIC_BASE_MSR_ENABLE;
		if (vcpu_ioctl(v, KVM_SET_SREGS, &sregs) < 0)
			return -1;
		return vcpu_ioctl(v, KVM_SET_MP_STATE, &mp) < 0 ? -1 : 0;
	}
	if (x86_boot_enter_long_mode(v, &e))
		return -1;
	return vcpu_ioctl(v, KVM_SET_MP_STATE, &mp) < 0 ? -1 : 0;
}

unsigned int linux_boot_areas(const struct vm *vm, uint64_t *gpa, uint64_t *len, unsigned int max)
{
	unsigned int n = 0;

	if (max < 2)
		return 0;
	gpa[n] = 0;
	len[n++] = vm->guest->kernel_end;
	if (vm->guest->initrd.data) {
		gpa[n] = vm->guest->initrd_gpa;
		len[n++] = vm->guest->initrd.size;
	}
	return n;
}
