// SPDX-License-Identifier: GPL-2.0
/* hwlab-vmm's option table: usage and parser come from the same rows. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "options.h"
#include "unit.h"

static int parse(struct vmm_options *o, const char *const *args)
{
	char *argv[32];
	int argc = 0;

	argv[argc++] = (char *)"hwlab-vmm";
	for (; *args; args++)
		argv[argc++] = (char *)*args;
	argv[argc] = NULL;
	optind = 0;	/* glibc: start a fresh scan */
	opterr = 0;
	return options_parse(argc, argv, o);
}

UNIT_TEST(options, "VMM options table")
{
	static const char *const names[] = {
		"--mem MIB", "--slots N", "--backing KIND", "--vcpus N", "--passes N",
		"--mce-kill POLICY", "--guest-no-mce", "--guest-keep-mcip", "--guest-retry-ar", "--guest-fail-test",
		"--guest-log-flood N",
		"--guest-read-unwritten", "--guest-repeat-pass", "--guest-ucall-at-retired",
		"--mce-lsb MODE", "--on-unrecoverable A", "--memmap FILE", "--poison-gpa GPA",
		"--poison-pass N", "--poison-method M", "--poison-vmm-heap", "--check", "--help",
		"--kernel BZIMAGE", "--initrd FILE", "--append CMDLINE", "--console FILE",
		"--mce-vendor V", "--console-stamp", "--console-in FILE", "hugetlb-1g",
	};
	struct vmm_options o;
	char usage[8192];
	unsigned int i;
	FILE *f = fmemopen(usage, sizeof(usage), "w");

	options_usage(f);
	fclose(f);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		CHECK(strstr(usage, names[i]) != NULL, "usage lists '%s'", names[i]);

	CHECK_EQ(parse(&o, (const char *const[]){ "guest.elf", NULL }), 0);
	CHECK_EQ(o.mem_size, 16ULL << 20);
	CHECK_EQ(o.nr_vcpus, 1);
	CHECK_EQ(o.passes, 3);
	CHECK_EQ(o.mce_kill, -1);
	CHECK(!strcmp(o.image_path, "guest.elf"), "image %s", o.image_path);

	CHECK_EQ(parse(&o, (const char *const[]){ "--mem", "64", "--slots", "4", "--vcpus", "2",
		 "--backing", "hugetlb", "--mce-kill", "early", "--mce-lsb", "page",
		 "--guest-no-mce", "--guest-log-flood", "100000", "--poison-gpa", "0x523000", "--poison-gpa", "0x600000",
		 "--poison-method", "corrupt-pfn", "--on-unrecoverable", "reset", "g.elf", NULL }), 0);
	CHECK_EQ(o.mem_size, 64ULL << 20);
	CHECK_EQ(o.nr_slots, 4);
	CHECK_EQ(o.nr_vcpus, 2);
	CHECK_EQ(o.backing, BACKING_HUGETLB);
	CHECK_EQ(o.mce_kill, 1);	/* PR_MCE_KILL_EARLY */
	CHECK_EQ(o.mce_page_lsb, 1);
	CHECK_EQ(o.guest_no_mce, 1);
	CHECK_EQ(o.guest_log_flood, 100000);
	CHECK_EQ(o.nr_poison, 2);
	CHECK_EQ(o.poison_gpas[1], 0x600000);
	CHECK_EQ(o.poison_corrupt_pfn, 1);
	CHECK_EQ(o.reset_on_unrecoverable, 1);

	/* 1 GiB hugetlb pages: guest RAM in whole ones, per slot */
	CHECK_EQ(parse(&o, (const char *const[]){ "--backing", "hugetlb-1g", "--mem", "2048",
		 "g.elf", NULL }), 0);
	CHECK_EQ(o.backing, BACKING_HUGETLB_1G);
	CHECK_EQ(o.mem_size, 2ULL << 30);
	CHECK_EQ(parse(&o, (const char *const[]){ "--backing", "hugetlb-1g", "--mem", "2048",
		 "--slots", "2", "g.elf", NULL }), 0);

	/* --check and --help are answers, not exits from inside the parser */
	CHECK_EQ(parse(&o, (const char *const[]){ "--check", NULL }), 0);
	CHECK_EQ(o.action, VMM_CHECK);
	CHECK_EQ(parse(&o, (const char *const[]){ "--help", NULL }), 0);
	CHECK_EQ(o.action, VMM_HELP);

	fprintf(stderr, "(the next error messages are expected)\n");
	CHECK_EQ(parse(&o, (const char *const[]){ "--backing", "floppy", "g.elf", NULL }), -1);
	CHECK_EQ(parse(&o, (const char *const[]){ "--vcpus", "9", "g.elf", NULL }), -1);
	/* not a whole number of 1 GiB pages: the default 16 MiB, 1.5 GiB, 2 GiB in 4 slots */
	CHECK_EQ(parse(&o, (const char *const[]){ "--backing", "hugetlb-1g", "g.elf", NULL }), -1);
	CHECK_EQ(parse(&o, (const char *const[]){ "--backing", "hugetlb-1g", "--mem", "1536",
		 "g.elf", NULL }), -1);
	CHECK_EQ(parse(&o, (const char *const[]){ "--backing", "hugetlb-1g", "--mem", "2048",
		 "--slots", "4", "g.elf", NULL }), -1);
	CHECK_EQ(parse(&o, (const char *const[]){ "--backing", "hugetlb-1G", "--mem", "1024",
		 "g.elf", NULL }), -1);
	CHECK_EQ(parse(&o, (const char *const[]){ "--vcpus", "0", "g.elf", NULL }), -1);
	CHECK_EQ(parse(&o, (const char *const[]){ "--mem", "16x", "g.elf", NULL }), -1);
	CHECK_EQ(parse(&o, (const char *const[]){ "--mem", "9", "g.elf", NULL }), -1);
	/* 0 is not "the default": it used to be taken as 16 MiB without a word */
	CHECK_EQ(parse(&o, (const char *const[]){ "--mem", "0", "g.elf", NULL }), -1);
	CHECK_EQ(parse(&o, (const char *const[]){ "--mem", "0", "--kernel", "bz", NULL }), -1);
	/* --check runs no guest: a guest image or stray argument with it is refused */
	CHECK_EQ(parse(&o, (const char *const[]){ "--check", "g.elf", NULL }), -1);
	CHECK_EQ(parse(&o, (const char *const[]){ "extra", "--check", NULL }), -1);
	/* nor another option: --check --mem 64 said "ok" about a setting it never used */
	CHECK_EQ(parse(&o, (const char *const[]){ "--check", "--mem", "64", NULL }), -1);
	CHECK_EQ(parse(&o, (const char *const[]){ "--console", "/etc/passwd", "--check", NULL }), -1);
	CHECK_EQ(parse(&o, (const char *const[]){ "--passes", "-1", "g.elf", NULL }), -1);
	CHECK_EQ(parse(&o, (const char *const[]){ "--poison-gpa", "0x1000", "g.elf", NULL }), -1);
	CHECK_EQ(parse(&o, (const char *const[]){ "--no-such-option", "g.elf", NULL }), -1);
	CHECK_EQ(parse(&o, (const char *const[]){ NULL }), -1);
	CHECK_EQ(parse(&o, (const char *const[]){ "a.elf", "b.elf", NULL }), -1);
	/* every number is whole and in range: empty is not 0, -1 and 2^32 + 1 do not wrap */
	CHECK_EQ(parse(&o, (const char *const[]){ "--poison-gpa", "", "g.elf", NULL }), -1);
	CHECK_EQ(parse(&o, (const char *const[]){ "--poison-gpa", "-1", "g.elf", NULL }), -1);
	CHECK_EQ(parse(&o, (const char *const[]){ "--poison-gpa", "0x500000 ", "g.elf", NULL }), -1);
	CHECK_EQ(parse(&o, (const char *const[]){ "--mem", "", "g.elf", NULL }), -1);
	CHECK_EQ(parse(&o, (const char *const[]){ "--slots", "4294967297", "g.elf", NULL }), -1);
	CHECK_EQ(parse(&o, (const char *const[]){ "--passes", "4294967296", "g.elf", NULL }), -1);
	CHECK_EQ(parse(&o, (const char *const[]){ "--poison-pass", "", "g.elf", NULL }), -1);
	CHECK_EQ(parse(&o, (const char *const[]){ "--vcpus", "+2", "g.elf", NULL }), -1);

	/* the two kinds of guest, and what depends on the kind */
	{
		static const char *const elf[] = { "g.elf", NULL };
		static const char *const lx[] = { "--kernel", "bz", "--initrd", "i", NULL };
		static const char *const both[] = { "--kernel", "bz", "g.elf", NULL };
		static const char *const initrd_alone[] = { "--initrd", "i", "g.elf", NULL };
		static const char *const lx_hook[] = { "--kernel", "bz", "--poison-gpa", "0x500000",
						       NULL };
		static const char *const lx_extent[] = { "--kernel", "bz", "--mce-lsb", "extent",
							 "--mce-vendor", "intel", NULL };

		CHECK_EQ(parse(&o, elf), 0);
		CHECK(o.mem_size == 16ULL << 20 && o.mce_page_lsb == 0 && !o.kernel_path,
		      "bare-metal defaults");
		CHECK_EQ(parse(&o, lx), 0);
		CHECK(o.mem_size == 128ULL << 20 && o.mce_page_lsb == 1 && !o.image_path &&
		      !strcmp(o.append, "console=ttyS0") && o.mce_vendor == -1,
		      "Linux defaults: 128 MiB, 4 KiB-granular MISC, a console");
		CHECK_EQ(parse(&o, both), -1);
		CHECK_EQ(parse(&o, initrd_alone), -1);
		CHECK_EQ(parse(&o, lx_hook), -1);
		CHECK_EQ(parse(&o, lx_extent), 0);
		CHECK(o.mce_page_lsb == 0 && o.mce_vendor == 0, "explicit choices win");
	}
}
