// SPDX-License-Identifier: GPL-2.0
/*
 * One table describes every option: its name, its argument, its help text
 * and how it is stored. The usage text and the getopt_long() table are both
 * made from it, so an option cannot be documented and parsed differently.
 */
#define _GNU_SOURCE
#include "options.h"

#include <getopt.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>

#include "x86/cpuid.h"
#include "hwlab_abi.h"
#include "log.h"
#include "parse_num.h"

struct choice {
	const char *name;
	int value;
};

enum option_kind {
	OPT_FLAG,		/* int field set to 1 */
	OPT_UINT,		/* unsigned int field, 0..max */
	OPT_CHOICE,		/* int field, one of choices */
	OPT_STRING,		/* const char * field */
	OPT_CALL,		/* set() does it */
};

struct option_desc {
	const char *name;
	const char *arg;	/* the argument's name in the usage text; NULL: none */
	const char *help;	/* '\n' starts an indented continuation line */
	enum option_kind kind;
	size_t field;		/* offsetof(struct vmm_options, ...) */
	uint64_t max;		/* OPT_UINT */
	const struct choice *choices;
	int (*set)(struct vmm_options *o, const char *arg);
};

static const struct choice backings[] = {
	{ "anon", BACKING_ANON }, { "thp", BACKING_THP }, { "hugetlb", BACKING_HUGETLB },
	{ "hugetlb-1g", BACKING_HUGETLB_1G },
	{ "hugetlb-shared", BACKING_HUGETLB_SHARED }, { 0 },
};
static const struct choice mce_kill_policies[] = {
	{ "early", PR_MCE_KILL_EARLY }, { "late", PR_MCE_KILL_LATE }, { "sysctl", -1 }, { 0 },
};
static const struct choice mce_lsb_modes[] = { { "extent", 0 }, { "page", 1 }, { 0 } };
static const struct choice mce_vendors[] = {
	{ "auto", -1 }, { "intel", CPU_VENDOR_INTEL }, { "amd", CPU_VENDOR_AMD }, { 0 },
};
static const struct choice unrecoverable_actions[] = { { "stop", 0 }, { "reset", 1 }, { 0 } };
static const struct choice poison_methods[] = { { "madvise", 0 }, { "corrupt-pfn", 1 }, { 0 } };

static int number(const char *opt, const char *arg, uint64_t max, uint64_t *out)
{
	if (!parse_u64(arg, max, out))
		return 0;
	pr_err("--%s: '%s' is not a number up to %llu", opt, arg, (unsigned long long)max);
	return -1;
}

static int set_mem(struct vmm_options *o, const char *arg)
{
	uint64_t mib;

	if (number("mem", arg, 1 << 20, &mib))
		return -1;
	/* 0 is what "not given" looks like here: it used to mean the default */
	if (!mib) {
		pr_err("--mem 0: the guest needs RAM, 8..3072 MiB");
		return -1;
	}
	o->mem_size = mib << 20;
	return 0;
}

static int add_poison_gpa(struct vmm_options *o, const char *arg)
{
	if (o->nr_poison == MAX_POISON_HOOKS) {
		pr_err("at most %d --poison-gpa", MAX_POISON_HOOKS);
		return -1;
	}
	return number("poison-gpa", arg, UINT64_MAX, &o->poison_gpas[o->nr_poison++]);
}

static int set_check(struct vmm_options *o, const char *arg)
{
	(void)arg;
	o->action = VMM_CHECK;
	return 0;
}

static int set_help(struct vmm_options *o, const char *arg)
{
	(void)arg;
	o->action = VMM_HELP;
	return 0;
}

#define F(field) offsetof(struct vmm_options, field)
#define STR_(x) #x
#define STR(x) STR_(x)
/* getopt_long() values: past every short option character and its '?' */
#define OPT_VAL_BASE 256

/* The table's rows, kvmtool style: one macro per kind of option. */
#define OPT_FLAG_ROW(n, h, f) \
	{ .name = n, .help = h, .kind = OPT_FLAG, .field = F(f) }
#define OPT_UINT_ROW(n, a, h, f, m) \
	{ .name = n, .arg = a, .help = h, .kind = OPT_UINT, .field = F(f), .max = m }
#define OPT_CHOICE_ROW(n, a, h, f, c) \
	{ .name = n, .arg = a, .help = h, .kind = OPT_CHOICE, .field = F(f), .choices = c }
#define OPT_STRING_ROW(n, a, h, f) \
	{ .name = n, .arg = a, .help = h, .kind = OPT_STRING, .field = F(f) }
#define OPT_CALL_ROW(n, a, h, fn) \
	{ .name = n, .arg = a, .help = h, .kind = OPT_CALL, .set = fn }

static const struct option_desc options[] = {
	OPT_STRING_ROW("kernel", "BZIMAGE", "boot a Linux kernel (x86 64-bit boot protocol)\n"
		       "instead of GUEST.elf", kernel_path),
	OPT_STRING_ROW("initrd", "FILE", "the Linux guest's initramfs", initrd_path),
	OPT_STRING_ROW("append", "CMDLINE", "the Linux guest's command line (default\n"
		       "\"console=ttyS0\")", append),
	OPT_STRING_ROW("console", "FILE", "the Linux guest's serial console (COM1), appended\n"
		       "to FILE: your own file (created 0600), a FIFO with a\n"
		       "reader, a terminal or /dev/null; never a symlink (default:\n"
		       "stderr; never stdout, the report channel)", console_path),
	OPT_STRING_ROW("console-in", "FILE", "what the Linux guest reads on COM1: a file, a FIFO\n"
		       "(its writer may come later) or - for stdin (default:\n"
		       "nothing)",
		       console_in),
	OPT_FLAG_ROW("console-stamp", "start every console line with \"[t_ns=N] \", its\n"
		     "CLOCK_MONOTONIC time (the clock of the report lines)", console_stamp),
	OPT_CALL_ROW("mem", "MIB", "guest RAM (default 16, Linux 128; at least 8)", set_mem),
	OPT_UINT_ROW("slots", "N", "split RAM into N memslots (default 1)", nr_slots, MAX_MEMSLOTS),
	OPT_CHOICE_ROW("backing", "KIND", "anon | thp | hugetlb (2 MiB pages) | hugetlb-1g\n"
		       "(1 GiB pages: --mem a multiple of 1024 per slot) |\n"
		       "hugetlb-shared (2 MiB pages of a memfd mapped shared:\n"
		       "a poisoned one loses 4 KiB, not 2 MiB)\n(default anon)",
		       backing, backings),
	OPT_UINT_ROW("vcpus", "N", "vCPU threads (default 1, at most " STR(GUEST_MAX_VCPUS) ")",
		     nr_vcpus, GUEST_MAX_VCPUS),
	OPT_UINT_ROW("passes", "N", "guest workload passes (default 3; 0: until SIGTERM)", passes,
		     UINT32_MAX),
	OPT_CHOICE_ROW("mce-kill", "POLICY",
		       "early | late | sysctl: PR_MCE_KILL for the VMM (default sysctl)", mce_kill,
		       mce_kill_policies),
	OPT_FLAG_ROW("guest-no-mce", "guest leaves CR4.MCE clear", guest_no_mce),
	OPT_FLAG_ROW("guest-keep-mcip", "guest's #MC handler never clears MCG_STATUS.MCIP",
		     guest_keep_mcip),
	OPT_FLAG_ROW("guest-retry-ar", "guest's #MC handler returns into the poisoned access",
		     guest_retry_ar),
	OPT_FLAG_ROW("guest-fail-test", "guest fails at once (shows where a guest failure is told)",
		     guest_fail_test),
	OPT_FLAG_ROW("guest-repeat-pass", "guest reports every pass twice (a guest that lies)",
		     guest_repeat_pass),
	OPT_FLAG_ROW("guest-ucall-at-retired", "guest points a ucall at the page it was just\n"
		     "told is poisoned (a hostile guest)", guest_ucall_at_retired),
	OPT_UINT_ROW("guest-log-flood", "N", "guest logs N lines in a tight loop first (shows\n"
		     "the guest_log rate limit)", guest_log_flood, UINT32_MAX),
	OPT_FLAG_ROW("guest-read-unwritten", "test: guest reads a page nobody writes, so the\n"
		     "host maps the zero page there (tools must refuse it)", guest_read_unwritten),
	OPT_CHOICE_ROW("mce-lsb", "MODE",
		       "extent: MCi_MISC LSB = si_addr_lsb, one vMCE per huge page\n"
		       "(default for GUEST.elf); page: always LSB 12 at the si_addr\n"
		       "page, as a Linux guest needs (default with --kernel)",
		       mce_page_lsb, mce_lsb_modes),
	OPT_CHOICE_ROW("mce-vendor", "V",
		       "auto | intel | amd: whose machine-check encoding the guest\n"
		       "gets (default: Intel's for GUEST.elf, the CPUID vendor's\nfor --kernel)",
		       mce_vendor, mce_vendors),
	OPT_CHOICE_ROW("on-unrecoverable", "A",
		       "stop | reset: when the guest cannot take a machine check",
		       reset_on_unrecoverable, unrecoverable_actions),
	OPT_STRING_ROW("memmap", "FILE", "memslot table for tools, created new (default\n"
		       "/run/hwlab-vmm/PID.memmap; not root: /tmp/hwlab-vmm-UID/)", memmap_path),
	OPT_CALL_ROW("poison-gpa", "GPA", "test hook: poison GPA after vCPU 0 reports --poison-pass",
		     add_poison_gpa),
	OPT_UINT_ROW("poison-pass", "N", "(default 1)", poison_pass, UINT32_MAX),
	OPT_CHOICE_ROW("poison-method", "M", "madvise | corrupt-pfn (default madvise)",
		       poison_corrupt_pfn, poison_methods),
	OPT_FLAG_ROW("poison-vmm-heap", "test hook: poison (and, without early kill, read) a page\n"
		     "of the VMM's own heap, outside guest RAM", poison_vmm_heap),
	OPT_CALL_ROW("check", NULL, "check /dev/kvm, KVM_CREATE_VM and MCE support, then exit",
		     set_check),
	OPT_CALL_ROW("help", NULL, "this text", set_help),
};

#define NR_OPTIONS (sizeof(options) / sizeof(options[0]))

void options_usage(FILE *f)
{
	unsigned int i;

	fprintf(f, "usage: hwlab-vmm [options] GUEST.elf\n"
		"       hwlab-vmm [options] --kernel BZIMAGE [--initrd FILE] [--append CMDLINE]\n"
		"       hwlab-vmm --check\n");
	for (i = 0; i < NR_OPTIONS; i++) {
		const struct option_desc *d = &options[i];
		const char *h = d->help, *nl;
		char left[40];

		snprintf(left, sizeof(left), "--%s%s%s", d->name, d->arg ? " " : "",
			 d->arg ? d->arg : "");
		for (; (nl = strchr(h, '\n')); h = nl + 1, left[0] = 0)
			fprintf(f, "  %-20s %.*s\n", left, (int)(nl - h), h);
		fprintf(f, "  %-20s %s\n", left, h);
	}
}

static int set_choice(const struct option_desc *d, const char *arg, int *out)
{
	const struct choice *c;

	for (c = d->choices; c->name; c++)
		if (!strcmp(arg, c->name)) {
			*out = c->value;
			return 0;
		}
	pr_err("--%s: bad value '%s'", d->name, arg);
	return -1;
}

static int apply(const struct option_desc *d, const char *arg, struct vmm_options *o)
{
	void *field = (char *)o + d->field;
	uint64_t v;

	switch (d->kind) {
	case OPT_FLAG:
		*(int *)field = 1;
		return 0;
	case OPT_UINT:
		if (number(d->name, arg, d->max, &v))
			return -1;
		*(unsigned int *)field = v;
		return 0;
	case OPT_CHOICE:
		return set_choice(d, arg, field);
	case OPT_STRING:
		*(const char **)field = arg;
		return 0;
	case OPT_CALL:
		return d->set(o, arg);
	}
	return -1;
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
	if (o->nr_vcpus < 1) {
		pr_err("--vcpus must be 1..%d", GUEST_MAX_VCPUS);
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
	struct option longopts[NR_OPTIONS + 1];
	const char *other = NULL;	/* an option besides --check */
	unsigned int i;
	int c;

	*o = (struct vmm_options) {
		.nr_slots = 1, .backing = BACKING_ANON,
		.nr_vcpus = 1, .passes = 3, .mce_kill = -1, .max_resets = 3, .poison_pass = 1,
		.mce_page_lsb = -1, .mce_vendor = -1, .mem_size = 0,
	};
	for (i = 0; i < NR_OPTIONS; i++)
		longopts[i] = (struct option) {
			options[i].name, options[i].arg ? required_argument : no_argument, NULL,
			OPT_VAL_BASE + (int)i,
		};
	memset(&longopts[NR_OPTIONS], 0, sizeof(longopts[0]));

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (c == 'h') {
			o->action = VMM_HELP;
			continue;
		}
		if (c < OPT_VAL_BASE || c >= OPT_VAL_BASE + (int)NR_OPTIONS) {
			options_usage(stderr);
			return -1;
		}
		if (apply(&options[c - OPT_VAL_BASE], optarg, o))
			return -1;
		if (!other && strcmp(options[c - OPT_VAL_BASE].name, "check"))
			other = options[c - OPT_VAL_BASE].name;
	}
	if (o->action == VMM_CHECK && other) {
		/* it checks /dev/kvm only: a setting given with it would seem checked */
		pr_err("--check takes no other option (--%s): it runs no guest", other);
		return -1;
	}
	if (o->action == VMM_CHECK && optind != argc) {
		/* it runs no guest: an image named with it is a mistake, not ignored */
		pr_err("--check takes no guest image or other argument ('%s')", argv[optind]);
		return -1;
	}
	if (o->action != VMM_RUN)
		return 0;
	if (optind + (o->kernel_path ? 0 : 1) != argc) {
		if (o->kernel_path)
			pr_err("--kernel boots a Linux guest: no GUEST.elf as well ('%s')",
			       argv[optind]);
		else
			options_usage(stderr);
		return -1;
	}
	if (!o->kernel_path)
		o->image_path = argv[optind];
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
	const struct choice *c;

	for (c = mce_kill_policies; c->name; c++)
		if (c->value == mce_kill)
			return c->name;
	return "?";
}
