// SPDX-License-Identifier: GPL-2.0
/*
 * hwpoison-guest --watch (libvirt_domain.h, lv_watch()): libvirt's
 * memory-failure and lifecycle events as report lines, and the requests
 * read from stdin (poison, save, quit), in one event loop with the stop
 * signals; every wait in it bounded (docs/design.md, the refusals).
 */
#define _GNU_SOURCE
#include "libvirt_domain.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libvirt/virterror.h>

#include "clock.h"
#include "log.h"
#include "memory_failure_event.h"
#include "path.h"

struct watch {
	const struct lv_watch_options *opt;
	virConnectPtr conn;
	virDomainPtr dom;
	int started;		/* we created dom: destroy it on the way out */
	int done, status;
	int stopped;		/* the watched domain's STOPPED event was printed */
	int drained;		/* gave up waiting for it */
	char line[PATH_MAX + 16];	/* a request: "save FILE" with any FILE */
	size_t have;
};

static int wants(const struct watch *w, virDomainPtr dom)
{
	return !w->opt->domain || !strcmp(virDomainGetName(dom), w->opt->domain);
}

/*
 * One line to stdout. SIGTERM and SIGINT are blocked for the watch's
 * signalfd, so a write that waited for a reader that stopped reading could
 * not be ended: it waits in poll() slices, and a pending stop drops it.
 */
static void print_line(const char *line)
{
	struct pollfd p = { .fd = STDOUT_FILENO, .events = POLLOUT };
	sigset_t pending;

	fflush(stdout);
	for (;;) {
		if (poll(&p, 1, 100) > 0)
			break;
		if (!sigpending(&pending) &&
		    (sigismember(&pending, SIGTERM) || sigismember(&pending, SIGINT)))
			return;
	}
	fputs(line, stdout);
	fputc('\n', stdout);
	fflush(stdout);
}

static void on_memory_failure(virConnectPtr conn, virDomainPtr dom, int recipient, int action,
			      unsigned int flags, void *opaque)
{
	char line[512];

	(void)conn;
	if (!wants(opaque, dom))
		return;
	mf_format(line, sizeof(line), virDomainGetName(dom), recipient, action, flags,
		  monotonic_ns());
	print_line(line);
}

static const char *lifecycle_name(int event)
{
	static const char *const names[] = {
		[VIR_DOMAIN_EVENT_DEFINED] = "defined", [VIR_DOMAIN_EVENT_UNDEFINED] = "undefined",
		[VIR_DOMAIN_EVENT_STARTED] = "started", [VIR_DOMAIN_EVENT_SUSPENDED] = "suspended",
		[VIR_DOMAIN_EVENT_RESUMED] = "resumed", [VIR_DOMAIN_EVENT_STOPPED] = "stopped",
		[VIR_DOMAIN_EVENT_SHUTDOWN] = "shutdown", [VIR_DOMAIN_EVENT_PMSUSPENDED] = "pmsuspended",
		[VIR_DOMAIN_EVENT_CRASHED] = "crashed",
	};

	return event >= 0 && event < (int)(sizeof(names) / sizeof(names[0])) && names[event] ?
	       names[event] : "other";
}

static int on_lifecycle(virConnectPtr conn, virDomainPtr dom, int event, int detail, void *opaque)
{
	struct watch *w = opaque;
	char line[512], name[256];

	(void)conn;
	if (!wants(w, dom))
		return 0;
	mf_json_escape(name, sizeof(name), virDomainGetName(dom));
	snprintf(line, sizeof(line), "{\"event\":\"domain_lifecycle\",\"domain\":\"%s\","
		 "\"lifecycle\":\"%s\",\"detail\":%d,\"t_ns\":%" PRIu64 "}", name,
		 lifecycle_name(event), detail, monotonic_ns());
	print_line(line);
	/* the watched guest is gone: nothing left to poison or to hear from */
	if (w->opt->domain && event == VIR_DOMAIN_EVENT_STOPPED)
		w->done = w->stopped = 1;
	return 0;
}

/* libvirt's word for a domain's state, as virsh domstate says it */
static const char *state_name(int state)
{
	static const char *const names[] = {
		[VIR_DOMAIN_NOSTATE] = "nostate", [VIR_DOMAIN_RUNNING] = "running",
		[VIR_DOMAIN_BLOCKED] = "blocked", [VIR_DOMAIN_PAUSED] = "paused",
		[VIR_DOMAIN_SHUTDOWN] = "shutdown", [VIR_DOMAIN_SHUTOFF] = "shutoff",
		[VIR_DOMAIN_CRASHED] = "crashed", [VIR_DOMAIN_PMSUSPENDED] = "pmsuspended",
	};

	return state >= 0 && state < (int)(sizeof(names) / sizeof(names[0])) && names[state] ?
	       names[state] : "other";
}

/*
 * "save FILE": what virsh save does, virDomainSave: libvirt pauses the
 * guest, has QEMU migrate it into FILE (which libvirt opens) and ends the
 * domain; when that fails it resumes the guest. One "save" line: ok or
 * refused with libvirt's message, and the state libvirt reports after it
 * ("gone" when libvirt no longer knows the domain: a transient one that
 * was saved, and so stopped). The call returns when the save has ended:
 * until then the watch's other lines wait in libvirt's event queue.
 */
static void save_domain(struct watch *w, const char *path)
{
	char *error = NULL, *line;
	int saved, state = -1, reason;
	const char *after;
	struct stat st;

	/*
	 * libvirt opens FILE in this process (the embedded driver) with the
	 * stop signals blocked: a FIFO there would hold open() for good.
	 * (One swapped in after this check still can; SIGKILL ends it.)
	 */
	if (!lstat(path, &st) && !S_ISREG(st.st_mode)) {
		saved = 0;
		error = strdup("it exists and is not a regular file (a FIFO would block the save)");
		w->status = 1;
	} else {
		saved = virDomainSave(w->dom, path) == 0;
	}
	/* the message first: the next libvirt call resets it */
	if (!saved && !error) {
		error = strdup(lv_last_error());
		w->status = 1;
	}
	if (virDomainGetState(w->dom, &state, &reason, 0) == 0)
		after = state_name(state);
	else
		after = virGetLastErrorCode() == VIR_ERR_NO_DOMAIN ? "gone" : "unknown";
	line = watch_save_line(virDomainGetName(w->dom), path, saved,
			       error ? error : "unknown libvirt error", after, monotonic_ns());
	if (line)
		print_line(line);
	else
		pr_say("watch: out of memory for the save line");
	free(line);
	free(error);
}

/* One request from stdin: "poison GPA", "save FILE" or "quit". */
static void run_command(struct watch *w, char *cmd)
{
	struct watch_request r;
	char line[320];
	int status;

	switch (watch_request_parse(cmd, &r)) {
	case WATCH_REQ_NONE:
		return;
	case WATCH_REQ_QUIT:
		w->done = 1;
		return;
	case WATCH_REQ_POISON:
		if (!w->dom)
			break;
		status = w->opt->poison(w->opt->ctx, w->dom, r.gpa);
		if (status)
			w->status = status;
		snprintf(line, sizeof(line), "{\"event\":\"poison_done\",\"gpa\":\"%#" PRIx64 "\","
			 "\"status\":%d,\"t_ns\":%" PRIu64 "}", r.gpa, status, monotonic_ns());
		print_line(line);
		return;
	case WATCH_REQ_SAVE:
		if (!w->dom)
			break;
		save_domain(w, r.path);
		return;
	default:
		pr_say("watch: ignoring '%.200s': %s", cmd, r.why);
		w->status = 2;
		return;
	}
	pr_say("watch: ignoring '%.200s': poison and save need --domain",
		cmd);
	w->status = 2;
}

static void on_stdin(int watch_id, int fd, int events, void *opaque)
{
	struct watch *w = opaque;
	ssize_t n;
	char *nl;

	(void)watch_id;
	(void)events;
	n = read(fd, w->line + w->have, sizeof(w->line) - 1 - w->have);
	if (n <= 0) {
		w->done = 1;	/* EOF: whoever drives us is gone */
		return;
	}
	w->have += (size_t)n;
	w->line[w->have] = 0;
	while ((nl = strchr(w->line, '\n'))) {
		*nl = 0;
		run_command(w, w->line);
		w->have -= (size_t)(nl + 1 - w->line);
		memmove(w->line, nl + 1, w->have + 1);
	}
	if (w->have == sizeof(w->line) - 1) {
		pr_say("watch: a request longer than %zu bytes: dropped",
			sizeof(w->line) - 2);
		w->have = 0;
		w->status = 2;
	}
}

static void on_signal(int watch_id, int fd, int events, void *opaque)
{
	struct signalfd_siginfo si;

	(void)watch_id;
	(void)events;
	if (read(fd, &si, sizeof(si)) == sizeof(si))
		((struct watch *)opaque)->done = 1;
}

static void on_drain_timeout(int timer, void *opaque)
{
	(void)timer;
	((struct watch *)opaque)->drained = 1;
}

static int start_domain(struct watch *w)
{
	char err[512], line[512], name[256];
	char *xml = NULL;
	size_t cap = 0;
	/* (signals are blocked: a FIFO would hold open() for good) */
	int fd = path_open_regular(w->opt->start_xml, O_RDONLY);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "r");
	pid_t pid;

	if (!f || getdelim(&xml, &cap, 0, f) < 0) {
		pr_say("cannot read domain XML %s: %s", w->opt->start_xml,
			errno == EINVAL ? "not a regular file" : strerror(errno));
		if (f)
			fclose(f);
		else if (fd >= 0)
			close(fd);
		free(xml);
		return -1;
	}
	fclose(f);
	/*
	 * The guest lives no longer than this watch, which destroys it on the
	 * way out: libvirt 9.0's embedded driver refuses AUTODESTROY ("not
	 * supported for embedded drivers yet"), so a watch killed by SIGKILL
	 * leaves its QEMU running.
	 */
	w->dom = virDomainCreateXML(w->conn, xml, 0);
	free(xml);
	if (!w->dom) {
		pr_say("cannot start the domain in %s: %s",
			w->opt->start_xml, lv_last_error());
		return -1;
	}
	w->started = 1;
	if (strcmp(virDomainGetName(w->dom), w->opt->domain)) {
		pr_say("%s starts domain %s, not the --domain %s",
			w->opt->start_xml, virDomainGetName(w->dom), w->opt->domain);
		return -1;
	}
	pid = lv_qemu_pid(w->dom, err, sizeof(err));
	if (pid < 0)
		pr_say("%s", err);
	mf_json_escape(name, sizeof(name), virDomainGetName(w->dom));
	snprintf(line, sizeof(line), "{\"event\":\"domain_started\",\"domain\":\"%s\",\"pid\":%d,"
		 "\"t_ns\":%" PRIu64 "}", name, (int)pid, monotonic_ns());
	print_line(line);
	return 0;
}

int lv_watch(const struct lv_watch_options *opt)
{
	struct watch w = { .opt = opt };
	char err[512];
	sigset_t sigs;
	int sfd, cb_mf, cb_life;

	w.conn = lv_open(opt->uri, err, sizeof(err));
	if (!w.conn) {
		pr_say("%s", err);
		return 1;
	}
	cb_mf = virConnectDomainEventRegisterAny(w.conn, NULL, VIR_DOMAIN_EVENT_ID_MEMORY_FAILURE,
						 VIR_DOMAIN_EVENT_CALLBACK(on_memory_failure), &w,
						 NULL);
	cb_life = virConnectDomainEventRegisterAny(w.conn, NULL, VIR_DOMAIN_EVENT_ID_LIFECYCLE,
						   VIR_DOMAIN_EVENT_CALLBACK(on_lifecycle), &w, NULL);
	if (cb_mf < 0 || cb_life < 0) {
		pr_say("cannot subscribe to domain events: %s",
			lv_last_error());
		virConnectClose(w.conn);
		return 1;
	}
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	sfd = signalfd(-1, &sigs, SFD_CLOEXEC);
	if (sfd < 0 || virEventAddHandle(sfd, VIR_EVENT_HANDLE_READABLE, on_signal, &w, NULL) < 0 ||
	    virEventAddHandle(STDIN_FILENO, VIR_EVENT_HANDLE_READABLE, on_stdin, &w, NULL) < 0) {
		pr_say("cannot watch stdin and signals: %s",
			sfd < 0 ? strerror(errno) : lv_last_error());
		virConnectClose(w.conn);
		return 1;
	}
	if (opt->start_xml && start_domain(&w)) {
		if (w.dom) {
			virDomainDestroy(w.dom);
			virDomainFree(w.dom);
		}
		virConnectClose(w.conn);
		return 1;
	}
	if (!w.dom && opt->domain) {
		w.dom = virDomainLookupByName(w.conn, opt->domain);
		if (!w.dom) {
			pr_say("no domain %s: %s", opt->domain,
				lv_last_error());
			virConnectClose(w.conn);
			return 1;
		}
	}
	print_line("{\"event\":\"watch_ready\"}");
	while (!w.done)
		if (virEventRunDefaultImpl() < 0) {
			pr_say("libvirt's event loop: %s", lv_last_error());
			w.status = 1;
			break;
		}
	if (w.started && virDomainIsActive(w.dom) == 1 && virDomainDestroy(w.dom) == 0) {
		/* its "stopped" event, so that the output ends as the guest did (at most 5 s) */
		int t = virEventAddTimeout(5000, on_drain_timeout, &w, NULL);

		while (!w.stopped && !w.drained && t >= 0 && virEventRunDefaultImpl() == 0)
			;
		if (t >= 0)
			virEventRemoveTimeout(t);
	}
	if (w.dom)
		virDomainFree(w.dom);
	virConnectDomainEventDeregisterAny(w.conn, cb_mf);
	virConnectDomainEventDeregisterAny(w.conn, cb_life);
	virConnectClose(w.conn);
	return w.status;
}
