// SPDX-License-Identifier: GPL-2.0
/*
 * hwlab-vmm's option table and what only the VMM knows: its choices, its
 * defaults, which options fit together. lib/options.c parses the table and
 * makes the usage text from it.
 */
#define _GNU_SOURCE
#include "options.h"

#include <string.h>
#include <sys/prctl.h>

#include "mce/mce.h"
#include "x86/cpuid.h"
#include "hwlab_abi.h"
#include "lib/options.h"
#include "log.h"

static const struct opt_choice backings[] = {
	{ "anon", BACKING_ANON }, { "thp", BACKING_THP }, { "hugetlb", BACKING_HUGETLB },
	{ "hugetlb-1g", BACKING_HUGETLB_1G },
	{ "hugetlb-shared", BACKING_HUGETLB_SHARED }, { "shmem", BACKING_SHMEM }, { 0 },
};
static const struct opt_choice mce_kill_policies[] = {
	{ "early", PR_MCE_KILL_EARLY }, { "late", PR_MCE_KILL_LATE }, { "sysctl", -1 }, { 0 },
};
static const struct opt_choice mce_lsb_modes[] = { { "extent", 0 }, { "page", 1 }, { 0 } };
static const struct opt_choice mce_vendors[] = {
	{ "auto", -1 }, { "intel", CPU_VENDOR_INTEL }, { "amd", CPU_VENDOR_AMD }, { 0 },
};
static const struct opt_choice smca_modes[] = {
	{ "auto", -1 }, { "off", 0 }, { "on", 1 }, { 0 },
};
static const struct opt_choice unrecoverable_actions[] = { { "stop", 0 }, { "reset", 1 }, { 0 } };
static const struct opt_choice poison_methods[] = { { "madvise", 0 }, { "corrupt-pfn", 1 }, { 0 } };

static int set_mem(void *ctx, const struct opt_desc *d, const char *arg)
{
	struct vmm_options *o = ctx;
	uint64_t mib;

	if (opt_number(d->name, arg, 1 << 20, &mib))
		return -1;
	/* 0 is what "not given" looks like here: it used to mean the default */
	if (!mib) {
		pr_err("--mem 0: the guest needs RAM, 8..3072 MiB");
		return -1;
	}
	o->mem_size = mib << 20;
	return 0;
}

/* auto, or a count from QEMU's 10 (the AR bank is 9) to KVM_X86_SETUP_MCE's 32 */
static int set_mce_banks(void *ctx, const struct opt_desc *d, const char *arg)
{
	struct vmm_options *o = ctx;
	uint64_t n;

	if (!strcmp(arg, "auto")) {
		o->mce_banks = 0;
		return 0;
	}
	if (opt_number(d->name, arg, HWLAB_MCE_MAX_BANKS, &n))
		return -1;
	if (n < HWLAB_MCE_BANKS) {
		pr_err("--mce-banks %s: give auto or %d..%d (the AR bank is %d)", arg,
		       HWLAB_MCE_BANKS, HWLAB_MCE_MAX_BANKS, HWLAB_MCE_BANK);
		return -1;
	}
	o->mce_banks = (int)n;
	return 0;
}

static int add_poison_gpa(void *ctx, const struct opt_desc *d, const char *arg)
{
	struct vmm_options *o = ctx;

	if (o->nr_poison == MAX_POISON_HOOKS) {
		pr_err("at most %d --poison-gpa", MAX_POISON_HOOKS);
		return -1;
	}
	return opt_number(d->name, arg, UINT64_MAX, &o->poison_gpas[o->nr_poison++]);
}

static int set_pin_gpa(void *ctx, const struct opt_desc *d, const char *arg)
{
	struct vmm_options *o = ctx;

	o->pin = 1;
	return opt_number(d->name, arg, UINT64_MAX, &o->pin_gpa);
}

static int set_check(void *ctx, const struct opt_desc *d, const char *arg)
{
	struct vmm_options *o = ctx;

	(void)d;
	(void)arg;
	o->action = VMM_CHECK;
	return 0;
}

static int set_help(void *ctx, const struct opt_desc *d, const char *arg)
{
	struct vmm_options *o = ctx;

	(void)d;
	(void)arg;
	o->action = VMM_HELP;
	return 0;
}

#define STR_(x) #x
#define STR(x) STR_(x)

/* lib/options.h's rows, into struct vmm_options */
#define FLAG(n, h, f)		OPT_FLAG_ROW(struct vmm_options, n, h, f)
#define UINT(n, a, h, f, m)	OPT_UINT_ROW(struct vmm_options, n, a, h, f, m)
#define CHOICE(n, a, h, f, c)	OPT_CHOICE_ROW(struct vmm_options, n, a, h, f, c)
#define STRING(n, a, h, f)	OPT_STRING_ROW(struct vmm_options, n, a, h, f)

static const struct opt_desc rows[] = {
	STRING("kernel", "BZIMAGE", "boot a Linux kernel (x86 64-bit boot protocol)\n"
	       "instead of GUEST.elf", kernel_path),
	STRING("initrd", "FILE", "the Linux guest's initramfs", initrd_path),
	STRING("append", "CMDLINE", "the Linux guest's command line (default\n"
	       "\"console=ttyS0\")", append),
	STRING("console", "FILE", "the Linux guest's serial console (COM1), appended\n"
	       "to FILE: your own file (created 0600), a FIFO with a\n"
	       "reader, a terminal or /dev/null; never a symlink (default:\n"
	       "stderr; never stdout, the report channel)", console_path),
	STRING("console-in", "FILE", "what the Linux guest reads on COM1: a file, a FIFO\n"
	       "(its writer may come later) or - for stdin (default:\n"
	       "nothing)",
	       console_in),
	FLAG("console-stamp", "start every console line with \"[t_ns=N] \", its\n"
	     "CLOCK_MONOTONIC time (the clock of the report lines)", console_stamp),
	OPT_CALL_ROW("mem", "MIB", "guest RAM (default 16, Linux 128; at least 8)", set_mem),
	UINT("slots", "N", "split RAM into N memslots (default 1)", nr_slots, MAX_MEMSLOTS),
	CHOICE("backing", "KIND", "anon | thp | hugetlb (2 MiB pages) | hugetlb-1g\n"
	       "(1 GiB pages: --mem a multiple of 1024 per slot) |\n"
	       "hugetlb-shared (2 MiB pages of a memfd mapped shared:\n"
	       "a poisoned one loses 4 KiB, not 2 MiB) | shmem (4 KiB\n"
	       "pages of a memfd mapped shared, QEMU's memory-backend-memfd)\n"
	       "(default anon)",
	       backing, backings),
	FLAG("ksm", "mark guest RAM mergeable (madvise MADV_MERGEABLE), as\n"
	     "QEMU's mem-merge=on does: ksmd may then share its pages with\n"
	     "identical ones (anon and thp backings)", ksm),
	STRING("snapshot", "FILE", "on SIGUSR2, pause the guest, write its whole state\n"
	       "to FILE (replaced whole, never through a symlink) and\n"
	       "run on; without it SIGUSR2 stops the VMM", snapshot_path),
	STRING("restore", "FILE", "start the guest from a --snapshot FILE instead of\n"
	       "booting it; give the options it was saved with",
	       restore_path),
	STRING("migrate-to", "unix:PATH", "on SIGUSR2, migrate the guest live to the\n"
	       "hwlab-vmm listening there (--incoming); it stops here\n"
	       "once that one runs it, else runs on here", migrate_to),
	UINT("migrate-bandwidth", "MIB", "keep a migration under MIB MiB/s (default: no\n"
	     "limit)", migrate_mib_s, 65536),
	STRING("incoming", "unix:PATH", "take the guest from a --migrate-to source instead\n"
	       "of booting it: listen on a new socket file PATH; give\n"
	       "the source's options", incoming),
	UINT("vcpus", "N", "vCPU threads (default 1, at most " STR(GUEST_MAX_VCPUS) ")",
	     nr_vcpus, GUEST_MAX_VCPUS),
	UINT("passes", "N", "guest workload passes (default 3; 0: until SIGTERM)", passes,
	     UINT32_MAX),
	CHOICE("mce-kill", "POLICY",
	       "early | late | sysctl: PR_MCE_KILL for the VMM (default sysctl)", mce_kill,
	       mce_kill_policies),
	FLAG("guest-no-mce", "guest leaves CR4.MCE clear", guest_no_mce),
	FLAG("guest-keep-mcip", "guest's #MC handler never clears MCG_STATUS.MCIP",
	     guest_keep_mcip),
	FLAG("guest-retry-ar", "guest's #MC handler returns into the poisoned access",
	     guest_retry_ar),
	FLAG("guest-fail-test", "guest fails at once (shows where a guest failure is told)",
	     guest_fail_test),
	FLAG("guest-repeat-pass", "guest reports every pass twice (a guest that lies)",
	     guest_repeat_pass),
	FLAG("guest-ucall-at-retired", "guest points a ucall at the page it was just\n"
	     "told is poisoned (a hostile guest)", guest_ucall_at_retired),
	UINT("guest-log-flood", "N", "guest logs N lines in a tight loop first (shows\n"
	     "the guest_log rate limit)", guest_log_flood, UINT32_MAX),
	FLAG("guest-read-unwritten", "test: guest reads a page nobody writes, so the\n"
	     "host maps the zero page there (tools must refuse it)", guest_read_unwritten),
	CHOICE("mce-lsb", "MODE",
	       "extent: MCi_MISC LSB = si_addr_lsb, one vMCE per huge page\n"
	       "(default for GUEST.elf); page: always LSB 12 at the si_addr\n"
	       "page, as a Linux guest needs (default with --kernel)",
	       mce_page_lsb, mce_lsb_modes),
	CHOICE("mce-vendor", "V",
	       "auto | intel | amd: whose machine-check encoding the guest\n"
	       "gets (default: Intel's for GUEST.elf, the CPUID vendor's\nfor --kernel)",
	       mce_vendor, mce_vendors),
	CHOICE("smca", "MODE",
	       "auto | on | off: give an AMD-encoded guest Scalable MCA (the\n"
	       "SMCA CPUID bit and bank MSRs) and raise its deferred-error\n"
	       "interrupt for an AO (default auto: off)",
	       smca, smca_modes),
	OPT_CALL_ROW("mce-banks", "N",
		     "auto | 10..32: the guest's machine-check banks; every bank\n"
		     "but the AR one (9) may hold a deferred error (default auto:\n"
		     "KVM's most, 32, with --smca on, else QEMU's 10)", set_mce_banks),
	CHOICE("on-unrecoverable", "A",
	       "stop | reset: when the guest cannot take a machine check",
	       reset_on_unrecoverable, unrecoverable_actions),
	STRING("memmap", "FILE", "memslot table for tools, created new (default\n"
	       "/run/hwlab-vmm/PID.memmap; not root: /tmp/hwlab-vmm-UID/)", memmap_path),
	OPT_CALL_ROW("poison-gpa", "GPA", "test hook: poison GPA after vCPU 0 reports --poison-pass",
		     add_poison_gpa),
	UINT("poison-pass", "N", "(default 1)", poison_pass, UINT32_MAX),
	CHOICE("poison-method", "M", "madvise | corrupt-pfn (default madvise)",
	       poison_corrupt_pfn, poison_methods),
	OPT_CALL_ROW("pin-gpa", "GPA", "test: hold a reference to the guest page at GPA for the\n"
		     "whole run, as a device doing DMA to it does (VFIO pins\n"
		     "guest RAM): the kernel cannot split the THP that holds it", set_pin_gpa),
	FLAG("poison-vmm-heap", "test hook: poison (and, without early kill, read) a page\n"
	     "of the VMM's own heap, outside guest RAM", poison_vmm_heap),
	OPT_CALL_ROW("check", NULL, "check /dev/kvm, KVM_CREATE_VM and MCE support, then exit",
		     set_check),
	{ .name = "help", .short_name = 'h', .help = "this text", .kind = OPT_CALL,
	  .set = set_help },
};

/* the first option besides --check, which takes none */
static void option_given(void *ctx, const struct opt_desc *d)
{
	struct vmm_options *o = ctx;

	if (!o->first_other && strcmp(d->name, "check"))
		o->first_other = d->name;
}

static const struct opt_table table = OPT_TABLE(
	"usage: hwlab-vmm [options] GUEST.elf\n"
	"       hwlab-vmm [options] --kernel BZIMAGE [--initrd FILE] [--append CMDLINE]\n"
	"       hwlab-vmm --check\n", rows, option_given);

void options_usage(FILE *f)
{
	opt_usage(&table, f);
}

/* What no single option can check: how they fit together. */
static int validate(const struct vmm_options *o)
{
	unsigned int i;

	if (o->kernel_path) {
		if (o->nr_poison || o->poison_vmm_heap) {
			pr_err("--poison-gpa and --poison-vmm-heap are test hooks of the bare-metal "
			       "guest's passes; a Linux guest has none: poison it with "
			       "hwpoison-guest");
			return -1;
		}
	} else if (o->initrd_path || o->append || o->console_path || o->console_stamp ||
		   o->console_in) {
		pr_err("--initrd, --append and --console are for a Linux guest: give --kernel");
		return -1;
	}
	if (o->mem_size < (8ULL << 20) || o->mem_size > (3ULL << 30) || o->nr_slots < 1 ||
	    o->mem_size % (o->nr_slots * (2ULL << 20))) {
		pr_err("--mem must be 8..3072 MiB and a multiple of 2 MiB per slot (%u slots)",
		       o->nr_slots);
		return -1;
	}
	if (o->backing == BACKING_HUGETLB_1G && o->mem_size % (o->nr_slots * (1ULL << 30))) {
		pr_err("--backing hugetlb-1g maps guest RAM in whole 1 GiB pages: --mem must be a "
		       "multiple of 1024 MiB per slot (%u slots), not %llu MiB", o->nr_slots,
		       (unsigned long long)(o->mem_size >> 20));
		return -1;
	}
	if (o->snapshot_path && o->migrate_to) {
		pr_err("--snapshot and --migrate-to both take SIGUSR2: give one");
		return -1;
	}
	if (o->restore_path && o->incoming) {
		pr_err("--restore and --incoming both give the guest's state: give one");
		return -1;
	}
	if (o->nr_vcpus < 1) {
		pr_err("--vcpus must be 1..%d", GUEST_MAX_VCPUS);
		return -1;
	}
	if (o->ksm && (memslot_backing_is_hugetlb(o->backing) ||
			memslot_backing_is_shared_file(o->backing))) {
		/* ksmd merges private anonymous pages only: the option would seem to work */
		pr_err("--ksm: KSM merges private anonymous pages only; --backing %s is not",
		       memslot_backing_name(o->backing));
		return -1;
	}
	if (o->pin && (o->kernel_path || o->pin_gpa < GUEST_WORKSET_GPA ||
		       o->pin_gpa >= o->mem_size)) {
		/* its first store must not land in what the loader put in RAM */
		pr_err("--pin-gpa %#llx must be in the bare-metal guest's working set [%#llx, %#llx)",
		       (unsigned long long)o->pin_gpa, GUEST_WORKSET_GPA,
		       (unsigned long long)o->mem_size);
		return -1;
	}
	for (i = 0; i < o->nr_poison; i++)
		if (o->poison_gpas[i] < GUEST_WORKSET_GPA || o->poison_gpas[i] >= o->mem_size) {
			pr_err("--poison-gpa %#llx is outside the guest's working set [%#llx, %#llx)",
			       (unsigned long long)o->poison_gpas[i], GUEST_WORKSET_GPA,
			       (unsigned long long)o->mem_size);
			return -1;
		}
	return 0;
}

int options_parse(int argc, char **argv, struct vmm_options *o)
{
	int first;

	*o = (struct vmm_options) {
		.nr_slots = 1, .backing = BACKING_ANON,
		.nr_vcpus = 1, .passes = 3, .mce_kill = -1, .max_resets = 3, .poison_pass = 1,
		.mce_page_lsb = -1, .mce_vendor = -1, .mem_size = 0, .smca = -1,
	};
	first = opt_parse(&table, argc, argv, o);
	if (first < 0)
		return -1;
	if (o->action == VMM_CHECK && o->first_other) {
		/* it checks /dev/kvm only: a setting given with it would seem checked */
		pr_err("--check takes no other option (--%s): it runs no guest", o->first_other);
		return -1;
	}
	if (o->action == VMM_CHECK && first != argc) {
		/* it runs no guest: an image named with it is a mistake, not ignored */
		pr_err("--check takes no guest image or other argument ('%s')", argv[first]);
		return -1;
	}
	if (o->action != VMM_RUN)
		return 0;
	if (first + (o->kernel_path ? 0 : 1) != argc) {
		if (o->kernel_path)
			pr_err("--kernel boots a Linux guest: no GUEST.elf as well ('%s')",
			       argv[first]);
		else
			options_usage(stderr);
		return -1;
	}
	if (!o->kernel_path)
		o->image_path = argv[first];
	/* what depends on the kind of guest */
	if (!o->mem_size)
		o->mem_size = (o->kernel_path ? 128ULL : 16ULL) << 20;
	if (o->mce_page_lsb < 0)
		o->mce_page_lsb = !!o->kernel_path;
	if (o->kernel_path && !o->append)
		o->append = "console=ttyS0";
	return validate(o);
}

const char *options_mce_kill_name(int mce_kill)
{
	return opt_choice_name(mce_kill_policies, mce_kill);
}
