// SPDX-License-Identifier: GPL-2.0
/*
 * A bare-metal x86-64 guest that survives memory errors. Each vCPU fills and
 * checksums its share of a working set, pass after pass. On a machine check
 * it reads the banks, retires the reported pages (never touches them again),
 * tells the VMM, and carries on: after an action-optional error it simply
 * returns; after an action-required one it resumes at the fixup of the
 * machine-check-safe access that consumed the poison.
 */
#include <stddef.h>
#include <stdint.h>

#include "hwlab_abi.h"
#include "x86_mce.h"

struct exc_frame {
	uint64_t r15, r14, r13, r12, r11, r10, r9, r8, rbp, rdi, rsi, rdx, rcx, rbx, rax;
	uint64_t vector, error, rip, cs, rflags, rsp, ss;
};

struct percpu {
	uint64_t id;
};

struct idt_entry {
	uint16_t off0, sel;
	uint8_t ist, type;
	uint16_t off1;
	uint32_t off2, zero;
} __attribute__((packed));

/* [start, end): code of an mc-safe access; a machine check there resumes at fixup */
struct mc_extable_entry {
	uint64_t start, end, fixup;
};

#define MAX_PAGES	(1u << 18)	/* 1 GiB of working set */

extern char exc_stub_0[], exc_stub_1[], exc_stub_2[], exc_stub_3[], exc_stub_4[];
extern char exc_stub_5[], exc_stub_6[], exc_stub_7[], exc_stub_8[], exc_stub_9[];
extern char exc_stub_10[], exc_stub_11[], exc_stub_12[], exc_stub_13[], exc_stub_14[];
extern char exc_stub_15[], exc_stub_16[], exc_stub_17[], exc_stub_18[], exc_stub_19[];
extern const struct mc_extable_entry __mc_extable_start[], __mc_extable_end[];
long mc_safe_fill(void *page, uint64_t seed, const uint64_t *retired_word, uint64_t retired_bit);
long mc_safe_verify(const void *page, uint64_t seed, const uint64_t *retired_word,
		    uint64_t retired_bit);
void exception_dispatch(struct exc_frame *f);
void guest_main(uint64_t vcpu_id, const struct hwlab_boot_info *bi);

static struct idt_entry idt[32] __attribute__((aligned(16)));
static uint64_t retired[MAX_PAGES / 64];
static const struct hwlab_boot_info *boot;
static volatile uint64_t idt_ready;

static inline uint64_t rdmsr(uint32_t msr)
{
	uint32_t lo, hi;

	asm volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return lo | (uint64_t)hi << 32;
}

static inline void wrmsr(uint32_t msr, uint64_t v)
{
	asm volatile("wrmsr" : : "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)));
}

static uint64_t vcpu_id(void)
{
	uint64_t id;

	asm volatile("mov %%gs:0, %0" : "=r"(id));
	return id;
}

static void *guest_memset(void *d, int c, size_t n)
{
	volatile uint8_t *p = d;

	while (n--)
		*p++ = c;
	return d;
}

static void copy_str(char *dst, const char *src, size_t n)
{
	size_t i;

	for (i = 0; i + 1 < n && src[i]; i++)
		dst[i] = src[i];
	dst[i] = 0;
}

/* The ucall struct lives on this stack frame; the VMM reads it at the exit. */
static void ucall(uint64_t cmd, const char *msg, uint64_t a0, uint64_t a1, uint64_t a2,
		  uint64_t a3, uint64_t a4)
{
	struct hwlab_ucall uc;

	guest_memset(&uc, 0, sizeof(uc));
	uc.cmd = cmd;
	uc.args[0] = a0;
	uc.args[1] = a1;
	uc.args[2] = a2;
	uc.args[3] = a3;
	uc.args[4] = a4;
	if (msg)
		copy_str(uc.msg, msg, sizeof(uc.msg));
	asm volatile("outl %0, %w1" : : "a"((uint32_t)(uintptr_t)&uc), "Nd"(UCALL_PORT)
		     : "memory");
}

/* Append src to dst[*n], keeping room for the NUL. */
static void append(char *dst, size_t *n, size_t len, const char *src)
{
	while (*src && *n + 1 < len)
		dst[(*n)++] = *src++;
	dst[*n] = 0;
}

static void append_uint(char *dst, size_t *n, size_t len, uint64_t v)
{
	char digits[21];
	int i = sizeof(digits) - 1;

	digits[i] = 0;
	do
		digits[--i] = '0' + v % 10;
	while ((v /= 10) && i > 0);
	append(dst, n, len, digits + i);
}

/*
 * Tell the VMM why this vCPU cannot go on, as "file:line: why" (the KVM
 * selftests' GUEST_ASSERT style), and stop. Use GUEST_FAIL().
 */
static void __attribute__((noreturn)) guest_fail(const char *file, unsigned int line,
						 const char *why, uint64_t vector, uint64_t rip,
						 uint64_t mcg, uint64_t mci)
{
	char msg[UCALL_MSG_LEN];
	size_t n = 0;

	msg[0] = 0;
	append(msg, &n, sizeof(msg), file);
	append(msg, &n, sizeof(msg), ":");
	append_uint(msg, &n, sizeof(msg), line);
	append(msg, &n, sizeof(msg), ": ");
	append(msg, &n, sizeof(msg), why);
	ucall(UCALL_FAIL, msg, vector, rip, mcg, mci, 0);
	for (;;)
		asm volatile("cli; hlt");
}

#define GUEST_FAIL(why, vector, rip, mcg, mci) \
	guest_fail(__FILE__, __LINE__, why, vector, rip, mcg, mci)

static int page_retired(uint64_t idx)
{
	return (__atomic_load_n(&retired[idx / 64], __ATOMIC_ACQUIRE) >> (idx % 64)) & 1;
}

/* Retire [gpa, gpa + len) of the working set; returns pages newly retired. */
static uint64_t retire(uint64_t gpa, uint64_t len)
{
	uint64_t first = boot->workset_gpa, end = first + boot->workset_size, n = 0, a;

	for (a = gpa & ~(GUEST_PAGE_SIZE - 1); a < gpa + len; a += GUEST_PAGE_SIZE) {
		uint64_t idx, bit, old;

		if (a < first || a >= end)
			continue;
		idx = (a - first) / GUEST_PAGE_SIZE;
		bit = 1ULL << (idx % 64);
		old = __atomic_fetch_or(&retired[idx / 64], bit, __ATOMIC_ACQ_REL);
		n += !(old & bit);
	}
	return n;
}

static const struct mc_extable_entry *mc_access_at(uint64_t rip)
{
	const struct mc_extable_entry *e;

	for (e = __mc_extable_start; e < __mc_extable_end; e++)
		if (rip >= e->start && rip < e->end)
			return e;
	return NULL;
}

static int fixup_mc_access(struct exc_frame *f)
{
	const struct mc_extable_entry *e = mc_access_at(f->rip);

	if (e)
		f->rip = e->fixup;
	return e != NULL;
}

/*
 * An action-optional error can arrive while an mc-safe access is already
 * working on the page it names. Resuming would touch the page we just
 * retired (and consume the poison); abort that access instead. The mc-safe
 * routines keep their page in rdi.
 */
static void abort_access_to_retired(struct exc_frame *f)
{
	uint64_t first = boot->workset_gpa, page = f->rdi & ~(GUEST_PAGE_SIZE - 1);

	if (!mc_access_at(f->rip) || page < first || page >= first + boot->workset_size)
		return;
	if (page_retired((page - first) / GUEST_PAGE_SIZE))
		fixup_mc_access(f);
}

/* A machine check this handler cannot recover from, with the bank that says so. */
#define MC_FAIL(why, mci) GUEST_FAIL(why, X86_MC_VECTOR, f->rip, mcg, mci)

static void machine_check(struct exc_frame *f)
{
	uint64_t mcg = rdmsr(MSR_IA32_MCG_STATUS), b;
	uint64_t banks = rdmsr(MSR_IA32_MCG_CAP) & MCG_CAP_COUNT_MASK;
	uint64_t action_required = 0, last_mci = 0;

	for (b = 0; b < banks; b++) {
		uint64_t st = rdmsr(MSR_IA32_MCx_STATUS(b)), addr, misc, lsb;

		if (!(st & MCI_STATUS_VAL))
			continue;
		last_mci = st;
		if (!(st & MCI_STATUS_UC))
			goto clear;	/* corrected: nothing to retire */
		/*
		 * EN clear: this bank did not signal the #MC. It is how an MCA
		 * broadcast looks on the CPUs that did not see the error (QEMU's
		 * VAL|UC in bank 1, which Linux's severity table calls "Not
		 * enabled"): nothing to retire, but the VMM hears that it came.
		 */
		if (!(st & MCI_STATUS_EN)) {
			ucall(UCALL_MC_BROADCAST, NULL, st, mcg, b, 0, 0);
			goto clear;
		}
		if ((st & MCI_STATUS_PCC) || !(st & MCI_STATUS_ADDRV) || !(st & MCI_STATUS_MISCV))
			MC_FAIL("machine check without a usable address", st);
		addr = rdmsr(MSR_IA32_MCx_ADDR(b));
		misc = rdmsr(MSR_IA32_MCx_MISC(b));
		if (MCI_MISC_ADDR_MODE(misc) != MCI_MISC_ADDR_PHYS)
			MC_FAIL("machine check address is not physical", st);
		lsb = misc & MCI_MISC_LSB_MASK;
		addr &= ~((1ULL << lsb) - 1);
		retire(addr, 1ULL << lsb);
		ucall(UCALL_RETIRED, NULL, addr, (1ULL << lsb) / GUEST_PAGE_SIZE, st, mcg, b);
		/* test: make the VMM read its ucall from the poisoned page */
		if (boot->flags & HWLAB_BOOT_UCALL_AT_RETIRED)
			asm volatile("outl %0, %w1" : : "a"((uint32_t)addr), "Nd"(UCALL_PORT)
				     : "memory");
		action_required |= st & MCI_STATUS_AR;
clear:
		wrmsr(MSR_IA32_MCx_STATUS(b), 0);
	}
	if (!(mcg & MCG_STATUS_RIPV))
		MC_FAIL("machine check with RIPV clear: cannot resume", last_mci);
	if (!action_required)
		abort_access_to_retired(f);
	else if (boot->flags & HWLAB_BOOT_RETRY_AR)
		;	/* test: a buggy handler goes back into the poison */
	else if (!fixup_mc_access(f))
		MC_FAIL("poison consumed outside a machine-check-safe access", last_mci);
	if (!(boot->flags & HWLAB_BOOT_KEEP_MCIP))
		wrmsr(MSR_IA32_MCG_STATUS, 0);	/* clear MCIP: ready for the next one */
}

void exception_dispatch(struct exc_frame *f)
{
	if (f->vector == X86_MC_VECTOR) {
		machine_check(f);
		return;
	}
	GUEST_FAIL("unexpected exception", f->vector, f->rip, f->error, 0);
}

static void setup_idt(void)
{
	static char *const stubs[] = {
		exc_stub_0, exc_stub_1, exc_stub_2, exc_stub_3, exc_stub_4, exc_stub_5,
		exc_stub_6, exc_stub_7, exc_stub_8, exc_stub_9, exc_stub_10, exc_stub_11,
		exc_stub_12, exc_stub_13, exc_stub_14, exc_stub_15, exc_stub_16, exc_stub_17,
		exc_stub_18, exc_stub_19,
	};
	unsigned int i;

	for (i = 0; i < sizeof(stubs) / sizeof(stubs[0]); i++) {
		uint64_t off = (uintptr_t)stubs[i];

		idt[i] = (struct idt_entry) {
			.off0 = off, .sel = GUEST_SEL_CODE, .type = 0x8e,	/* interrupt gate */
			.off1 = off >> 16, .off2 = off >> 32,
		};
	}
}

static void load_idt(void)
{
	struct {
		uint16_t limit;
		uint64_t base;
	} __attribute__((packed)) desc = { sizeof(idt) - 1, (uintptr_t)idt };

	asm volatile("lidt %0" : : "m"(desc));
}

static void enable_machine_checks(void)
{
	uint64_t cr4;

	asm volatile("mov %%cr4, %0" : "=r"(cr4));
	asm volatile("mov %0, %%cr4" : : "r"(cr4 | X86_CR4_MCE));
}

/* All vCPUs finish pass N before any starts N+1: runs are repeatable. */
static void pass_barrier(uint32_t nr_vcpus)
{
	static volatile uint32_t arrived, generation;
	uint32_t gen = __atomic_load_n(&generation, __ATOMIC_ACQUIRE);

	if (__atomic_add_fetch(&arrived, 1, __ATOMIC_ACQ_REL) == nr_vcpus) {
		__atomic_store_n(&arrived, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&generation, gen + 1, __ATOMIC_RELEASE);
		return;
	}
	while (__atomic_load_n(&generation, __ATOMIC_ACQUIRE) == gen)
		asm volatile("pause");
}

static uint64_t seed_of(uint64_t gpa, uint64_t pass)
{
	return (gpa * 0x9e3779b97f4a7c15ULL) ^ (pass << 48);
}

void guest_main(uint64_t id, const struct hwlab_boot_info *bi)
{
	uint64_t pages, per_vcpu, first, last, pass, checked = 0, errors = 0, idx;

	if (bi->magic != HWLAB_BOOT_MAGIC)
		GUEST_FAIL("bad boot info magic", 0, 0, 0, 0);
	if (id == 0) {
		boot = bi;
		setup_idt();
		__atomic_store_n(&idt_ready, 1, __ATOMIC_RELEASE);
	}
	while (!__atomic_load_n(&idt_ready, __ATOMIC_ACQUIRE))
		asm volatile("pause");
	load_idt();
	if (!(bi->flags & HWLAB_BOOT_NO_MCE))
		enable_machine_checks();
	if (bi->flags & HWLAB_BOOT_FAIL_TEST)
		GUEST_FAIL("failing on request (--guest-fail-test)", 0, 0, 0, 0);
	/* a read fault on untouched host memory: KVM maps the host's zero page */
	if (id == 0 && (bi->flags & HWLAB_BOOT_READ_UNWRITTEN))
		(void)*(volatile const uint64_t *)GUEST_UNWRITTEN_GPA;
	if (vcpu_id() != id)
		GUEST_FAIL("per-cpu block does not match the vCPU id", 0, 0, 0, 0);

	pages = bi->workset_size / GUEST_PAGE_SIZE;
	if (pages > MAX_PAGES)
		pages = MAX_PAGES;
	per_vcpu = pages / bi->nr_vcpus;
	first = id * per_vcpu;
	last = id + 1 == bi->nr_vcpus ? pages : first + per_vcpu;
	ucall(UCALL_LOG, bi->flags & HWLAB_BOOT_NO_MCE ? "guest up, CR4.MCE clear" :
	      "guest up, #MC handler installed, CR4.MCE set", id, first, last, bi->boot_count, 0);
	/* test: a guest that logs in a loop must not flood the VMM's output */
	for (idx = 0; idx < bi->log_flood; idx++)
		ucall(UCALL_LOG, "log flood (--guest-log-flood)", idx, 0, 0, 0, 0);

	for (pass = 1; !bi->passes || pass <= bi->passes; pass++) {
		uint64_t live = 0;

		for (idx = first; idx < last; idx++) {
			uint64_t gpa = bi->workset_gpa + idx * GUEST_PAGE_SIZE;

			if (!page_retired(idx))
				mc_safe_fill((void *)gpa, seed_of(gpa, pass), &retired[idx / 64],
					     1ULL << (idx % 64));
		}
		for (idx = first; idx < last; idx++) {
			uint64_t gpa = bi->workset_gpa + idx * GUEST_PAGE_SIZE;
			long bad;

			if (page_retired(idx))
				continue;
			bad = mc_safe_verify((const void *)gpa, seed_of(gpa, pass), &retired[idx / 64],
					     1ULL << (idx % 64));
			if (bad < 0)
				continue;	/* #MC: the handler retired the page */
			/* a page retired after its fill was never rewritten: not an error */
			if (bad > 0 && !page_retired(idx))
				errors++;
			live++;
		}
		checked += live;
		{
			uint64_t nret = 0;

			for (idx = first; idx < last; idx++)
				nret += page_retired(idx);
			ucall(UCALL_PASS, NULL, pass, live, nret, errors, 0);
			if (bi->flags & HWLAB_BOOT_REPEAT_PASS)
				ucall(UCALL_PASS, NULL, pass, live, nret, errors, 0);
		}
		pass_barrier(bi->nr_vcpus);
	}
	{
		uint64_t nret = 0;

		for (idx = first; idx < last; idx++)
			nret += page_retired(idx);
		ucall(UCALL_DONE, NULL, bi->passes, checked, nret, errors, 0);
	}
}
