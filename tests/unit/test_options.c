// SPDX-License-Identifier: GPL-2.0
/*
 * The option tables of hwlab-vmm and hwpoison-guest (lib/options.c's
 * engine): usage and parser come from the same rows.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "hwpoison_guest_options.h"
#include "lib/options.h"
#include "log.h"
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
		"--mce-vendor V", "--smca MODE", "--mce-banks N", "--console-stamp", "--console-in FILE",
		"hugetlb-1g", "shmem", "--ksm", "--pin-gpa GPA",
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

	/* --ksm: anonymous RAM only (ksmd never merges hugetlb pages) */
	CHECK_EQ(parse(&o, (const char *const[]){ "--ksm", "--backing", "thp", "g.elf", NULL }), 0);
	CHECK(o.ksm == 1, "--ksm set");
	CHECK_EQ(parse(&o, (const char *const[]){ "--ksm", "--backing", "hugetlb", "g.elf", NULL }),
		 -1);
	CHECK_EQ(parse(&o, (const char *const[]){ "--ksm", "--backing", "hugetlb-shared", "g.elf",
						  NULL }), -1);
	CHECK_EQ(parse(&o, (const char *const[]){ "--ksm", "--backing", "shmem", "g.elf", NULL }),
		 -1);
	/* --backing shmem: a tmpfs memfd mapped shared */
	CHECK_EQ(parse(&o, (const char *const[]){ "--backing", "shmem", "g.elf", NULL }), 0);
	CHECK(o.backing == BACKING_SHMEM && memslot_backing_is_shared_file(o.backing) &&
	      !memslot_backing_is_hugetlb(o.backing) &&
	      memslot_backing_page_size(o.backing) == 4096, "--backing shmem");
	/* --pin-gpa: in the bare-metal guest's working set, which no loader writes */
	CHECK_EQ(parse(&o, (const char *const[]){ "--pin-gpa", "0x523000", "g.elf", NULL }), 0);
	CHECK(o.pin && o.pin_gpa == 0x523000, "--pin-gpa 0x523000");
	CHECK_EQ(parse(&o, (const char *const[]){ "--pin-gpa", "0x100000", "g.elf", NULL }), -1);
	CHECK_EQ(parse(&o, (const char *const[]){ "--pin-gpa", "0x1000000", "g.elf", NULL }), -1);
	CHECK_EQ(parse(&o, (const char *const[]){ "--kernel", "bz", "--pin-gpa", "0x523000", NULL }),
		 -1);

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

/* --smca auto | on | off: -1, 1, 0 in o->smca, auto when not given; anything else refused */
UNIT_TEST(options_smca, "VMM options: --smca")
{
	static const char *const lx[] = { "--kernel", "bz", NULL };
	struct vmm_options o;

	CHECK_EQ(parse(&o, (const char *const[]){ "g.elf", NULL }), 0);
	CHECK_EQ(o.smca, -1);
	CHECK_EQ(parse(&o, lx), 0);
	CHECK_EQ(o.smca, -1);
	CHECK_EQ(parse(&o, (const char *const[]){ "--smca", "on", "--kernel", "bz", NULL }), 0);
	CHECK_EQ(o.smca, 1);
	CHECK_EQ(parse(&o, (const char *const[]){ "--smca", "off", "--kernel", "bz", NULL }), 0);
	CHECK_EQ(o.smca, 0);
	CHECK_EQ(parse(&o, (const char *const[]){ "--smca", "auto", "--kernel", "bz", NULL }), 0);
	CHECK_EQ(o.smca, -1);
	CHECK_EQ(parse(&o, (const char *const[]){ "--smca=on", "g.elf", NULL }), 0);
	CHECK_EQ(o.smca, 1);

	fprintf(stderr, "(the next error messages are expected)\n");
	CHECK_EQ(parse(&o, (const char *const[]){ "--smca", "yes", "g.elf", NULL }), -1);
	CHECK_EQ(parse(&o, (const char *const[]){ "--smca", "ON", "g.elf", NULL }), -1);
	CHECK_EQ(parse(&o, (const char *const[]){ "--smca", "", "g.elf", NULL }), -1);
	CHECK_EQ(parse(&o, (const char *const[]){ "--smca", "1", "g.elf", NULL }), -1);
	CHECK_EQ(parse(&o, (const char *const[]){ "g.elf", "--smca", NULL }), -1);
}

/* --mce-banks auto | 10..32: 0 (auto) unless given; a count the guest cannot have refused */
UNIT_TEST(options_mce_banks, "VMM options: --mce-banks")
{
	struct vmm_options o;

	CHECK_EQ(parse(&o, (const char *const[]){ "g.elf", NULL }), 0);
	CHECK_EQ(o.mce_banks, 0);
	CHECK_EQ(parse(&o, (const char *const[]){ "--mce-banks", "32", "--kernel", "bz", NULL }), 0);
	CHECK_EQ(o.mce_banks, 32);
	CHECK_EQ(parse(&o, (const char *const[]){ "--mce-banks", "10", "g.elf", NULL }), 0);
	CHECK_EQ(o.mce_banks, 10);
	CHECK_EQ(parse(&o, (const char *const[]){ "--mce-banks", "32", "--mce-banks", "auto",
						  "g.elf", NULL }), 0);
	CHECK_EQ(o.mce_banks, 0);

	fprintf(stderr, "(the next error messages are expected)\n");
	CHECK_EQ(parse(&o, (const char *const[]){ "--mce-banks", "9", "g.elf", NULL }), -1);
	CHECK_EQ(parse(&o, (const char *const[]){ "--mce-banks", "0", "g.elf", NULL }), -1);
	CHECK_EQ(parse(&o, (const char *const[]){ "--mce-banks", "33", "g.elf", NULL }), -1);
	CHECK_EQ(parse(&o, (const char *const[]){ "--mce-banks", "-1", "g.elf", NULL }), -1);
	CHECK_EQ(parse(&o, (const char *const[]){ "--mce-banks", "AUTO", "g.elf", NULL }), -1);
	CHECK_EQ(parse(&o, (const char *const[]){ "--mce-banks", "", "g.elf", NULL }), -1);
}

/*
 * hwpoison-guest's parser with its stderr caught in err: the exit status it
 * asks for. Its argv is static: the operands point into it.
 */
static int tool_parse(struct hwpoison_guest_options *o, char *err, size_t len,
		      const char *const *args)
{
	static char *argv[32];
	const char *prog = log_prog;
	int argc = 0, saved, rc, was_opterr = opterr;
	FILE *tmp = tmpfile();
	size_t n;

	argv[argc++] = (char *)"hwpoison-guest";
	for (; *args; args++)
		argv[argc++] = (char *)*args;
	argv[argc] = NULL;
	err[0] = 0;
	if (!tmp)
		return -1;
	fflush(stderr);
	saved = dup(2);
	dup2(fileno(tmp), 2);
	log_prog = "hwpoison-guest";
	opterr = 1;	/* getopt's own words, as the tool prints them */
	rc = hwpoison_guest_parse(argc, argv, o);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	opterr = was_opterr;
	log_prog = prog;
	rewind(tmp);
	n = fread(err, 1, len - 1, tmp);
	err[n] = 0;
	fclose(tmp);
	return rc;
}

#define TOOL_REFUSES(status, want, ...)						\
	do {									\
		CHECK_EQ(tool_parse(&o, err, sizeof(err),			\
				    (const char *const[]){ __VA_ARGS__, NULL }), status); \
		CHECK(strstr(err, want) != NULL, "stderr has \"%s\": %s", want, err);	\
	} while (0)

UNIT_TEST(hwpoison_guest_options, "hwpoison-guest's options table")
{
	static const char *const names[] = {
		"usage: hwpoison-guest [--memmap FILE] [--debugfs DIR] [--wait-present SECONDS] "
		"[--corrupt-va] PID GPA\n",
		"(the watch reads 'poison GPA', 'save FILE' and 'quit' on stdin)\n",
		"--memmap FILE", "--debugfs DIR", "--wait-present SECONDS", "--corrupt-va",
		"--soak N", "--log VMM_REPORT", "--qmp SOCKET", "--connect URI", "--domain NAME",
		"--watch", "--start XML", "--help",
	};
	struct hwpoison_guest_options o;
	char usage[8192], err[8192];
	unsigned int i;
	FILE *f = fmemopen(usage, sizeof(usage), "w");

	hwpoison_guest_usage(f);
	fclose(f);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		CHECK(strstr(usage, names[i]) != NULL, "usage lists '%s'", names[i]);

	/* the forms the tool takes */
	CHECK_EQ(tool_parse(&o, err, sizeof(err), (const char *const[]){ "1234", "0x612000",
		 NULL }), 0);
	CHECK(o.nr_operands == 2 && !strcmp(o.operands[0], "1234") &&
	      !strcmp(o.operands[1], "0x612000") && !o.memmap_path && !o.debugfs &&
	      !o.wait_present_s && !o.corrupt_va && !o.soak_events &&
	      !hwpoison_guest_uses_libvirt(&o), "PID GPA, nothing else: %s", err);
	/* getopt moves the operands after the options, "--" ends them */
	CHECK_EQ(tool_parse(&o, err, sizeof(err), (const char *const[]){ "1234", "--memmap", "m",
		 "--debugfs", "d", "--wait-present", "3600", "--corrupt-va", "--", "0x1000",
		 NULL }), 0);
	CHECK(o.nr_operands == 2 && !strcmp(o.operands[1], "0x1000") &&
	      !strcmp(o.memmap_path, "m") && !strcmp(o.debugfs, "d") &&
	      o.wait_present_s == 3600 && o.corrupt_va, "every option of a page: %s", err);
	CHECK_EQ(tool_parse(&o, err, sizeof(err), (const char *const[]){ "--soak", "1000000",
		 "--log", "r", "1", "0x500000", NULL }), 0);
	CHECK(o.soak_events == 1000000 && !strcmp(o.soak_log, "r"), "a soak: %s", err);
	CHECK_EQ(tool_parse(&o, err, sizeof(err), (const char *const[]){ "--qmp", "s", "1", "2",
		 NULL }), 0);
	CHECK(!strcmp(o.qmp_socket, "s"), "a QMP socket");
	CHECK_EQ(tool_parse(&o, err, sizeof(err), (const char *const[]){ "--connect", "u",
		 "--domain", "d", "0x100000", NULL }), 0);
	CHECK(hwpoison_guest_uses_libvirt(&o) && o.nr_operands == 1 && !strcmp(o.uri, "u"),
	      "a libvirt domain's GPA");
	CHECK_EQ(tool_parse(&o, err, sizeof(err), (const char *const[]){ "--watch", "--domain",
		 "d", "--start", "x.xml", NULL }), 0);
	CHECK(o.watch && !strcmp(o.start_xml, "x.xml") && !o.nr_operands, "a watch");
	/* --help answers at once, whatever follows */
	CHECK_EQ(tool_parse(&o, err, sizeof(err), (const char *const[]){ "--help", "--bogus",
		 NULL }), 0);
	CHECK(o.help && !err[0], "--help: %s", err);
	CHECK_EQ(tool_parse(&o, err, sizeof(err), (const char *const[]){ "-h", NULL }), 0);
	CHECK(o.help, "-h");

	/* a bad value: exit 1 like every refusal of the tool, naming option and value */
	TOOL_REFUSES(1, "hwpoison-guest: error: --wait-present takes seconds from 0 to 3600, "
		     "not '-1'\n", "--wait-present", "-1", "1", "0x1000");
	TOOL_REFUSES(1, "--wait-present takes seconds from 0 to 3600, not '3601'",
		     "--wait-present", "3601", "1", "0x1000");
	TOOL_REFUSES(1, "--wait-present takes seconds from 0 to 3600, not ''",
		     "--wait-present", "", "1", "0x1000");
	TOOL_REFUSES(1, "hwpoison-guest: error: --soak takes a count from 1 to 1000000, not '0'\n",
		     "--soak", "0", "--log", "r", "1", "0x1000");
	TOOL_REFUSES(1, "--soak takes a count from 1 to 1000000, not '1000001'",
		     "--soak", "1000001", "--log", "r", "1", "0x1000");
	/* before --help: options are taken in order */
	TOOL_REFUSES(1, "--soak takes a count", "--soak", "x", "--help");
	/* an unknown option, a missing argument: getopt's words, the usage, exit 2 */
	TOOL_REFUSES(2, "hwpoison-guest: unrecognized option '--bogus'\nusage: hwpoison-guest ",
		     "--bogus", "1", "0x1000");
	TOOL_REFUSES(2, "hwpoison-guest: option '--soak' requires an argument\nusage: ",
		     "1", "0x1000", "--soak");
	TOOL_REFUSES(2, "hwpoison-guest: option '--corrupt-va' doesn't allow an argument\n",
		     "--corrupt-va=1", "1", "0x1000");
	/* options that do not fit together, or operands missing: the usage, exit 2 */
	TOOL_REFUSES(2, "usage: hwpoison-guest", "1");
	TOOL_REFUSES(2, "usage: hwpoison-guest", "1", "2", "3");
	TOOL_REFUSES(2, "usage: hwpoison-guest", "--soak", "3", "1", "0x1000");
	TOOL_REFUSES(2, "usage: hwpoison-guest", "--qmp", "s", "--soak", "3", "--log", "r", "1",
		     "0x1000");
	TOOL_REFUSES(2, "usage: hwpoison-guest", "--qmp", "s", "--memmap", "m", "1", "0x1000");
	TOOL_REFUSES(2, "usage: hwpoison-guest", "--domain", "d", "--soak", "3", "--log",
		     "/dev/null", "0x100000");
	TOOL_REFUSES(2, "usage: hwpoison-guest", "--domain", "d", "--corrupt-va", "0x100000");
	TOOL_REFUSES(2, "usage: hwpoison-guest", "--domain", "d");
	TOOL_REFUSES(2, "usage: hwpoison-guest", "--watch", "0x100000");
	TOOL_REFUSES(2, "usage: hwpoison-guest", "--connect", "u", "--watch", "--start", "x.xml");
	TOOL_REFUSES(2, "usage: hwpoison-guest", "--domain", "d", "--start", "x.xml", "0x1000");
	TOOL_REFUSES(2, "usage: hwpoison-guest", "--connect", "u", "1", "0x1000");
}

/* lib/options.c on a table of its own: kinds, short names, the given hook, stopping */
struct engine_ctx {
	int verbose, stopped;
	unsigned int count;
	const char *name;
	int colour;
	unsigned int given;
};

static const struct opt_choice colours[] = { { "red", 1 }, { "blue", 2 }, { 0 } };

static int engine_stop(void *ctx, const struct opt_desc *d, const char *arg)
{
	struct engine_ctx *e = ctx;

	(void)d;
	(void)arg;
	e->stopped = 1;
	return OPT_STOP;
}

static void engine_given(void *ctx, const struct opt_desc *d)
{
	(void)d;
	((struct engine_ctx *)ctx)->given++;
}

UNIT_TEST(opt_engine, "option-table engine (lib)")
{
	static const struct opt_desc rows[] = {
		{ .name = "verbose", .short_name = 'v', .help = "more", .kind = OPT_FLAG,
		  .field = OPT_FIELD(struct engine_ctx, verbose, int) },
		{ .name = "count", .short_name = 'n', .arg = "N", .help = "how many",
		  .kind = OPT_UINT, .field = OPT_FIELD(struct engine_ctx, count, unsigned int),
		  .max = 10 },
		OPT_STRING_ROW(struct engine_ctx, "name", "S", "a name", name),
		OPT_CHOICE_ROW(struct engine_ctx, "colour", "C", "red | blue", colour, colours),
		OPT_CALL_ROW("stop", NULL, "the rest is not read", engine_stop),
	};
	static const struct opt_table table = OPT_TABLE("usage: engine\n", rows, engine_given);
	struct engine_ctx e = { 0 };
	char *argv[] = { "engine", "-v", "op", "-n", "7", "--name", "x", "--colour", "blue",
			 "--stop", "--count", "99", NULL };
	int first, was_opterr = opterr;

	opterr = 0;
	first = opt_parse(&table, 9, argv, &e);
	CHECK(first == 8 && !strcmp(argv[first], "op"), "the operand after the options: %d", first);
	CHECK(e.verbose && e.count == 7 && !strcmp(e.name, "x") && e.colour == 2 && !e.stopped,
	      "every kind and short name stored");
	CHECK_EQ(e.given, 4);
	/* --stop ends the parse: the bad --count after it is never read */
	e = (struct engine_ctx) { 0 };
	CHECK(opt_parse(&table, 12, argv, &e) > 0 && e.stopped && e.count == 7,
	      "stopped at --stop, count %u", e.count);
	fprintf(stderr, "(the next error messages are expected)\n");
	CHECK_EQ(opt_parse(&table, 3, (char *[]){ "engine", "-n", "11", NULL }, &e),
		 OPT_BAD_VALUE);
	CHECK_EQ(opt_parse(&table, 3, (char *[]){ "engine", "--colour", "green", NULL }, &e),
		 OPT_BAD_VALUE);
	CHECK_EQ(opt_parse(&table, 2, (char *[]){ "engine", "-x", NULL }, &e), OPT_BAD_USAGE);
	CHECK_EQ(opt_parse(&table, 2, (char *[]){ "engine", "-n", NULL }, &e), OPT_BAD_USAGE);
	opterr = was_opterr;
	CHECK(!strcmp(opt_choice_name(colours, 1), "red") &&
	      !strcmp(opt_choice_name(colours, 3), "?"), "choice names");
}
