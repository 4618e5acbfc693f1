// SPDX-License-Identifier: GPL-2.0
#include "boot/x86_boot.h"

#include <string.h>

#include "boot/elf_load.h"
#include "boot/guest_boot.h"
#include "core/kvm_ioctl.h"
#include "log.h"
#include "core/vm.h"

#define X86_CR0_PE	(1ULL << 0)
#define X86_CR0_MP	(1ULL << 1)
#define X86_CR0_ET	(1ULL << 4)
#define X86_CR0_NE	(1ULL << 5)
#define X86_CR0_WP	(1ULL << 16)
#define X86_CR0_PG	(1ULL << 31)
#define X86_CR4_PAE	(1ULL << 5)
#define EFER_SCE	(1ULL << 0)
#define EFER_LME	(1ULL << 8)
#define EFER_LMA	(1ULL << 10)

#define PTE_PRESENT_RW	0x3ULL
#define PDE_2M_RW	0x83ULL		/* present, writable, 2 MiB page */
#define GDT_ENTRIES	4
#define SEL_TSS		0x18

int x86_boot_write_page_tables(struct vm *vm)
{
	uint64_t *pml4 = memslot_gpa_to_hva(&vm->mem, GUEST_PML4_GPA, 4096);
	uint64_t *pdpt = memslot_gpa_to_hva(&vm->mem, GUEST_PDPT_GPA, 4096);
	uint64_t *pd = memslot_gpa_to_hva(&vm->mem, GUEST_PD_GPA, 4 * 4096);
	unsigned int i;

	if (!pml4 || !pdpt || !pd) {
		pr_err("the boot page tables (below %#llx) are not in one memslot", GUEST_GDT_GPA);
		return -1;
	}
	memset(pml4, 0, 4096);
	memset(pdpt, 0, 4096);
	pml4[0] = GUEST_PDPT_GPA | PTE_PRESENT_RW;
	for (i = 0; i < 4; i++)
		pdpt[i] = (GUEST_PD_GPA + i * 4096) | PTE_PRESENT_RW;
	for (i = 0; i < 4 * 512; i++)
		pd[i] = ((uint64_t)i << 21) | PDE_2M_RW;
	return 0;
}

/* Page tables, a flat 64-bit GDT and the boot info of the bare-metal guest. */
static int write_boot_structures(struct vm *vm)
{
	uint64_t *gdt = memslot_gpa_to_hva(&vm->mem, GUEST_GDT_GPA, GDT_ENTRIES * 8);
	struct hwlab_boot_info *bi = memslot_gpa_to_hva(&vm->mem, GUEST_BOOT_INFO_GPA, sizeof(*bi));
	const struct vmm_options *opt = vm->opt;

	if (x86_boot_write_page_tables(vm))
		return -1;
	if (!gdt || !bi) {
		pr_err("the boot area (page tables, GDT, boot info below %#llx) is not in one "
		       "memslot", GUEST_LOAD_GPA);
		return -1;
	}
	gdt[0] = 0;
	gdt[1] = X86_GDT_CODE64;		/* GUEST_SEL_CODE */
	gdt[2] = X86_GDT_DATA;			/* GUEST_SEL_DATA */
	gdt[3] = X86_GDT_TSS_BUSY;		/* SEL_TSS: busy TSS, base 0 */

	memset(bi, 0, sizeof(*bi));
	bi->magic = HWLAB_BOOT_MAGIC;
	bi->ram_size = opt->mem_size;
	bi->workset_gpa = GUEST_WORKSET_GPA;
	bi->workset_size = opt->mem_size - GUEST_WORKSET_GPA;
	bi->nr_vcpus = opt->nr_vcpus;
	bi->passes = opt->passes;
	bi->flags = (opt->guest_no_mce ? HWLAB_BOOT_NO_MCE : 0) |
		    (opt->guest_keep_mcip ? HWLAB_BOOT_KEEP_MCIP : 0) |
		    (opt->guest_retry_ar ? HWLAB_BOOT_RETRY_AR : 0) |
		    (opt->guest_fail_test ? HWLAB_BOOT_FAIL_TEST : 0) |
		    (opt->guest_repeat_pass ? HWLAB_BOOT_REPEAT_PASS : 0) |
		    (opt->guest_ucall_at_retired ? HWLAB_BOOT_UCALL_AT_RETIRED : 0) |
		    (opt->guest_read_unwritten ? HWLAB_BOOT_READ_UNWRITTEN : 0);
	bi->boot_count = vm->boot_count;
	bi->log_flood = opt->guest_log_flood;
	return 0;
}

int x86_boot_load_elf_guest(struct vm *vm)
{
	char err[256];

	if (write_boot_structures(vm))
		return -1;
	if (elf_load(&vm->mem, vm->guest->image.data, vm->guest->image.size, &vm->entry, err, sizeof(err))) {
		pr_err("malformed guest image %s: %s", vm->guest->image.path, err);
		return -1;
	}
	return 0;
}

unsigned int x86_boot_elf_areas(const struct vm *vm, uint64_t *gpa, uint64_t *len, unsigned int max)
{
	(void)vm;
	if (max < 1)
		return 0;
	gpa[0] = 0;
	len[0] = GUEST_WORKSET_GPA;
	return 1;
}

static void flat_segment(struct kvm_segment *s, uint16_t sel, uint8_t type, int code)
{
	memset(s, 0, sizeof(*s));
	s->selector = sel;
	s->limit = 0xffffffff;
	s->type = type;
	s->present = 1;
	s->s = 1;
	s->l = code;
	s->db = !code;
	s->g = 1;
}

int x86_boot_enter_long_mode(struct vcpu *v, const struct x86_long_mode_entry *e)
{
	struct kvm_sregs sregs;
	struct kvm_regs regs;

	if (vcpu_ioctl(v, KVM_GET_SREGS, &sregs) < 0)
		return -1;
	sregs.cr0 = X86_CR0_PE | X86_CR0_MP | X86_CR0_ET | X86_CR0_NE | X86_CR0_WP | X86_CR0_PG;
	sregs.cr3 = GUEST_PML4_GPA;
	sregs.cr4 = X86_CR4_PAE;	/* the guest sets CR4.MCE itself */
	sregs.efer = EFER_LME | EFER_LMA | EFER_SCE;
	flat_segment(&sregs.cs, e->code_sel, 11, 1);
	flat_segment(&sregs.ds, e->data_sel, 3, 0);
	sregs.es = sregs.fs = sregs.gs = sregs.ss = sregs.ds;
	memset(&sregs.tr, 0, sizeof(sregs.tr));
	sregs.tr.selector = e->tss_sel;
	sregs.tr.limit = 0x67;
	sregs.tr.type = 11;
	sregs.tr.present = 1;
	sregs.gdt.base = GUEST_GDT_GPA;
	sregs.gdt.limit = e->gdt_entries * 8 - 1;
	sregs.idt.base = 0;
	sregs.idt.limit = 0;
	/*
	 * Whatever the last boot left: a page-fault address, a TPR, an LDT,
	 * and an external interrupt KVM had queued for injection, which
	 * KVM_SET_SREGS would queue again from interrupt_bitmap.
	 */
	sregs.cr2 = 0;
	sregs.cr8 = 0;
	memset(&sregs.ldt, 0, sizeof(sregs.ldt));
	sregs.ldt.limit = 0xffff;	/* the power-on LDTR: selector 0, a present LDT */
	sregs.ldt.type = 2;
	sregs.ldt.present = 1;
	memset(sregs.interrupt_bitmap, 0, sizeof(sregs.interrupt_bitmap));
	if (e->apic_base)
		sregs.apic_base = e->apic_base;
	if (vcpu_ioctl(v, KVM_SET_SREGS, &sregs) < 0)
		return -1;
	memset(&regs, 0, sizeof(regs));
	regs.rflags = 0x2;	/* interrupts off */
	regs.rip = e->rip;
	regs.rdi = e->rdi;
	regs.rsi = e->rsi;
	return vcpu_ioctl(v, KVM_SET_REGS, &regs) < 0 ? -1 : 0;
}

int x86_boot_reset_elf_vcpu(struct vcpu *v)
{
	struct x86_long_mode_entry e = {
		.code_sel = GUEST_SEL_CODE, .data_sel = GUEST_SEL_DATA, .tss_sel = SEL_TSS,
		.gdt_entries = GDT_ENTRIES, .rip = v->vm->entry, .rdi = v->id,
		.rsi = GUEST_BOOT_INFO_GPA,
	};

	return x86_boot_enter_long_mode(v, &e);
}
