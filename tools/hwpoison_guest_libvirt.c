// SPDX-License-Identifier: GPL-2.0
/*
 * hwpoison-guest --domain and --watch (the libvirt build only): a QEMU that
 * libvirt runs, as its users run it. libvirt names the pid and the page's
 * HVA (libvirt_domain.c); the checks and the write are the same as for any
 * VMM.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hwpoison_guest.h"
#include "libvirt_domain.h"
#include "log.h"
#include "memmap.h"
#include "parse_num.h"

/*
 * A libvirt domain's page: its QEMU's pid and the page's HVA through
 * libvirt, then, in a child (a refusal dies there, not in a watch that
 * owns the domain), the same checks and write as for any VMM. The pid is
 * asked again after the HVA: if QEMU went and another took its pid, the
 * HVA was not the new one's. Returns an exit status.
 */
static int poison_domain_page(void *ctx, virDomainPtr dom, uint64_t gpa)
{
	struct hwpoison_guest *g = ctx;
	uint64_t page = gpa & ~(PAGE - 1), hva;
	unsigned long long started;
	char err[512];
	pid_t pid, again, child;
	int st;

	pid = lv_qemu_pid(dom, err, sizeof(err));
	if (pid < 0) {
		pr_err("%s", err);
		return 1;
	}
	started = proc_start_time(pid);
	if (lv_gpa2hva(dom, page, &hva, err, sizeof(err))) {
		pr_err("%s", err);
		return 1;
	}
	again = lv_qemu_pid(dom, err, sizeof(err));
	if (again != pid || proc_start_time(pid) != started) {
		pr_err("domain %s's QEMU changed (pid %d, now %d) "
			"while its page was looked up: refusing to poison", virDomainGetName(dom),
			(int)pid, (int)again);
		return 1;
	}
	fflush(stdout);
	child = fork();
	if (child < 0) {
		pr_err("fork: %s", strerror(errno));
		return 1;
	}
	if (child == 0) {
		static struct memmap m;
		char source[300];

		g->vmm_start_time = started;
		target_check_exe(g, pid);
		snprintf(source, sizeof(source), "libvirt domain %s", virDomainGetName(dom));
		target_qemu_page(g, pid, page, hva, source, &m);
		hwpoison_guest_poison(g, pid, &m, gpa);
		fflush(stdout);
		_exit(0);
	}
	while (waitpid(child, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

/* --domain NAME GPA: one page of a domain some libvirt (a daemon's) runs */
static int poison_domain(struct hwpoison_guest *g, uint64_t gpa)
{
	const char *uri = g->opt.uri, *name = g->opt.domain;
	char err[512];
	virConnectPtr conn = lv_open(uri, err, sizeof(err));
	virDomainPtr dom;
	int rc;

	if (!conn)
		die("%s", err);
	dom = virDomainLookupByName(conn, name);
	if (!dom)
		die("no domain %s at %s: %s", name, uri ? uri : "libvirt's default URI",
		    lv_last_error());
	rc = poison_domain_page(g, dom, gpa);
	virDomainFree(dom);
	virConnectClose(conn);
	return rc;
}

int hwpoison_guest_libvirt(struct hwpoison_guest *g)
{
	const struct hwpoison_guest_options *o = &g->opt;
	uint64_t gpa;

	g->target_exe = "qemu-system-x86_64";
	if (o->watch) {
		struct lv_watch_options wo = { .uri = o->uri, .domain = o->domain,
					       .start_xml = o->start_xml,
					       .poison = poison_domain_page, .ctx = g };

		return lv_watch(&wo);
	}
	if (parse_u64(o->operands[0], UINT64_MAX, &gpa))
		die("'%s' is not a guest-physical address", o->operands[0]);
	return poison_domain(g, gpa);
}
