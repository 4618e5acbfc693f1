/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A libvirt-managed QEMU guest, as hwpoison-guest needs it: which process
 * runs it and where a guest-physical address lives in that process, both
 * asked through libvirt (libvirt-qemu's monitor passthrough), and QEMU's
 * own report of each memory failure (VIR_DOMAIN_EVENT_ID_MEMORY_FAILURE)
 * printed in the JSON vocabulary of hwlab-vmm's report lines.
 */
#ifndef HWLAB_LIBVIRT_DOMAIN_H
#define HWLAB_LIBVIRT_DOMAIN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <libvirt/libvirt.h>

/*
 * The pid of the QEMU that runs dom: the thread id of its first vCPU
 * (QMP query-cpus-fast, through virDomainQemuMonitorCommand) and that
 * thread's Tgid. -1 with a message in err.
 */
pid_t lv_qemu_pid(virDomainPtr dom, char *err, size_t len);
/* gpa2hva (HMP, through virDomainQemuMonitorCommand): 0, or -1 with err. */
int lv_gpa2hva(virDomainPtr dom, uint64_t gpa, uint64_t *hva, char *err, size_t len);
/* libvirt's last error message, or "unknown libvirt error". */
const char *lv_last_error(void);

/*
 * Poison the page at gpa of the QEMU that runs dom (hwpoison-guest's page
 * checks and write); returns an exit status. The watch calls it for each
 * "poison GPA" line on its stdin (and answers with a poison_done line).
 */
typedef int (*lv_poison_fn)(void *ctx, virDomainPtr dom, uint64_t gpa);

struct lv_watch_options {
	const char *uri;	/* NULL: libvirt's default */
	const char *domain;	/* NULL: every domain's events; no poisoning */
	const char *start_xml;	/* a domain to create first, destroyed on the way out */
	lv_poison_fn poison;
	void *ctx;		/* poison()'s first argument */
};

/*
 * The watch: one JSON line per memory-failure event (memory_failure_event.h)
 * and per lifecycle change of a domain, and the domain's requests read from
 * stdin (memory_failure_event.h reads them): "poison GPA", "save FILE"
 * (virDomainSave, what virsh save does: one "save" line, ok or refused
 * with libvirt's message, and the domain's state after it) and "quit",
 * all in one process. It must be one process:
 * libvirt's embedded driver (qemu:///embed?root=DIR) runs QEMU's driver in
 * its client, so only the process that started a domain can ask it
 * anything or hear its events. Ends on stdin's EOF or "quit", on SIGINT or
 * SIGTERM, or when the watched domain stops (a completed save stops it); a
 * domain it started is destroyed with it. Returns an exit status: 0, or
 * the last failed request's (a malformed one 2, a refused save 1, a
 * poison its own).
 */
int lv_watch(const struct lv_watch_options *opt);
/* Connect, with libvirt's event loop registered first (the embedded driver needs it). */
virConnectPtr lv_open(const char *uri, char *err, size_t len);

#endif
