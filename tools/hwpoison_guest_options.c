// SPDX-License-Identifier: GPL-2.0
/*
 * hwpoison-guest's option table (parsed by lib/options.c) and the forms
 * its options may take together: a VMM's pid and a GPA, a soak, a QMP
 * socket, or a libvirt domain.
 */
#include "hwpoison_guest_options.h"

#include "lib/options.h"

#define T struct hwpoison_guest_options
#define STR_(x) #x
#define STR(x) STR_(x)

static int set_help(void *ctx, const struct opt_desc *d, const char *arg)
{
	struct hwpoison_guest_options *o = ctx;

	(void)d;
	(void)arg;
	/* the answer at once, whatever else the line holds */
	o->help = 1;
	return OPT_STOP;
}

static const struct opt_desc rows[] = {
	OPT_STRING_ROW(T, "memmap", "FILE", "the VMM's memslot table (default: hwlab-vmm's\n"
		       "for PID, /run/hwlab-vmm/PID.memmap or /tmp/hwlab-vmm-UID/)",
		       memmap_path),
	OPT_STRING_ROW(T, "debugfs", "DIR", "where hwpoison/corrupt-pfn is (default: debugfs)",
		       debugfs),
	OPT_RANGE_ROW(T, "wait-present", "SECONDS", "wait this long for a page the guest has\n"
		      "not touched yet (default 0: refuse it)", wait_present_s, 0,
		      HWPOISON_GUEST_WAIT_MAX, "seconds"),
	OPT_FLAG_ROW(T, "corrupt-va", "write \"PID HVA\" to hwpoison/corrupt-va (kernel\n"
		     "patch 0002): the kernel resolves the page", corrupt_va),
	OPT_RANGE_ROW(T, "soak", "N", "poison N consecutive pages from FIRST_GPA, each\n"
		      "after the guest acknowledged the last, then print their\n"
		      "latencies (at most " STR(HWPOISON_GUEST_SOAK_MAX) ")", soak_events, 1,
		      HWPOISON_GUEST_SOAK_MAX, "a count"),
	OPT_STRING_ROW(T, "log", "VMM_REPORT", "the VMM's report lines, for --soak", soak_log),
	OPT_STRING_ROW(T, "qmp", "SOCKET", "PID is a QEMU: the GPA's HVA from its QMP monitor",
		       qmp_socket),
	OPT_STRING_ROW(T, "connect", "URI", "libvirt's URI (default: libvirt's own)", uri),
	OPT_STRING_ROW(T, "domain", "NAME", "poison a page of this libvirt domain's QEMU", domain),
	OPT_FLAG_ROW(T, "watch", "print libvirt's memory-failure events as report\n"
		     "lines; poison on 'poison GPA' requests, save on\n"
		     "'save FILE' (virDomainSave)", watch),
	OPT_STRING_ROW(T, "start", "XML", "the watch starts this domain first (and destroys\n"
		       "it at its end)", start_xml),
	{ .name = "help", .short_name = 'h', .help = "this text", .kind = OPT_CALL,
	  .set = set_help },
};

static const struct opt_table table = OPT_TABLE(
	"usage: hwpoison-guest [--memmap FILE] [--debugfs DIR] [--wait-present SECONDS] "
	"[--corrupt-va] PID GPA\n"
	"       hwpoison-guest --soak N --log VMM_REPORT [...] PID FIRST_GPA\n"
	"       hwpoison-guest --qmp SOCKET [--debugfs DIR] [--wait-present SECONDS] "
	"QEMU_PID GPA\n"
	"       hwpoison-guest [--connect URI] --domain NAME [--debugfs DIR] "
	"[--wait-present SECONDS] GPA\n"
	"       hwpoison-guest [--connect URI] --watch [--domain NAME] [--start XML] "
	"[--debugfs DIR] [--wait-present SECONDS]\n"
	"         (the watch reads 'poison GPA', 'save FILE' and 'quit' on stdin)\n", rows, NULL);

void hwpoison_guest_usage(FILE *f)
{
	opt_usage(&table, f);
}

/* options that do not fit together: the usage text, exit status 2 */
static int wrong_form(void)
{
	hwpoison_guest_usage(stderr);
	return 2;
}

int hwpoison_guest_parse(int argc, char **argv, struct hwpoison_guest_options *o)
{
	int first;

	*o = (struct hwpoison_guest_options) { 0 };
	first = opt_parse(&table, argc, argv, o);
	if (first == OPT_BAD_VALUE)
		return 1;
	if (first < 0)
		return 2;
	if (o->help)
		return 0;
	o->operands = argv + first;
	o->nr_operands = argc - first;
	if (hwpoison_guest_uses_libvirt(o)) {
		if (o->soak_events || o->memmap_path || o->qmp_socket || o->corrupt_va ||
		    o->nr_operands != (o->watch ? 0 : 1) ||
		    (!o->watch && (!o->domain || o->start_xml)) || (o->start_xml && !o->domain))
			return wrong_form();
		return 0;
	}
	if (o->nr_operands != 2 || (o->soak_events && !o->soak_log) ||
	    (o->qmp_socket && (o->soak_events || o->memmap_path)))
		return wrong_form();
	return 0;
}
