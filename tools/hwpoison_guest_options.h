/* SPDX-License-Identifier: GPL-2.0 */
/* hwpoison-guest's command line: which page, of which VMM, poisoned how. */
#ifndef HWLAB_HWPOISON_GUEST_OPTIONS_H
#define HWLAB_HWPOISON_GUEST_OPTIONS_H

#include <stdio.h>

#define HWPOISON_GUEST_SOAK_MAX	1000000
#define HWPOISON_GUEST_WAIT_MAX	3600

struct hwpoison_guest_options {
	const char *memmap_path;	/* NULL: the VMM's default table */
	const char *debugfs;		/* NULL: the real one, HWLAB_DEBUGFS */
	unsigned int wait_present_s;	/* poll this long for a page the guest never touched */
	unsigned int soak_events;	/* --soak N: N pages, one at a time; 0: one page */
	const char *soak_log;		/* --log: the VMM's report, for the soak's timings */
	int corrupt_va;			/* kernel patch 0002: by pid and address, no pagemap */
	const char *qmp_socket;		/* PID is a QEMU: GPA -> HVA from its monitor */
	const char *uri;		/* --connect: libvirt's URI */
	const char *domain;		/* --domain: a libvirt domain's QEMU */
	int watch;			/* --watch: libvirt's memory-failure events */
	const char *start_xml;		/* --start: a domain the watch starts itself */
	int help;
	/* what follows the options: PID GPA, or a domain's GPA, or nothing (--watch) */
	char **operands;
	int nr_operands;
};

/* libvirt finds the QEMU: no pid, no table, no soak, no QMP socket */
static inline int hwpoison_guest_uses_libvirt(const struct hwpoison_guest_options *o)
{
	return o->domain || o->watch || o->uri || o->start_xml;
}

/*
 * Parse argv into o (zeroed first). Returns 0 (also after --help), or the
 * exit status of a command line refused with its message: 1 for an
 * option's bad value, like every refusal of the tool, 2 for an unknown
 * option, a missing argument or options that do not fit together (the
 * usage text on stderr).
 */
int hwpoison_guest_parse(int argc, char **argv, struct hwpoison_guest_options *o);
void hwpoison_guest_usage(FILE *f);

#endif
