// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include "libvirt_domain.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libvirt/libvirt-qemu.h>
#include <libvirt/virterror.h>

#include "memmap.h"
#include "qmp.h"

const char *lv_last_error(void)
{
	const char *m = virGetLastErrorMessage();

	return m ? m : "unknown libvirt error";
}

/* The Tgid: line of /proc/TID/status: the process a thread belongs to. */
static pid_t tgid_of(long tid)
{
	char path[48], status[8192];
	uint64_t pid;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/status", tid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fread(status, 1, sizeof(status) - 1, f);
	fclose(f);
	status[n] = 0;
	/* Tgid comes fourth, well inside the first 8 KiB; a pid fits an int */
	if (proc_status_field(status, "Tgid", INT_MAX, &pid))
		return -1;
	return (pid_t)pid;
}

/*
 * libvirt's error message lives until its next call (even virDomainGetName()
 * resets it): every message below takes the name first, the error last.
 */
pid_t lv_qemu_pid(virDomainPtr dom, char *err, size_t len)
{
	const char *name = virDomainGetName(dom);
	char *reply = NULL;
	long tid;
	pid_t pid;

	/*
	 * libvirt's API has no call for the emulator's pid; the monitor names
	 * each vCPU thread, and a thread's Tgid is its process.
	 */
	if (virDomainQemuMonitorCommand(dom, "{\"execute\":\"query-cpus-fast\"}", &reply, 0) < 0) {
		snprintf(err, len, "domain %s: query-cpus-fast through libvirt: %s", name,
			 lv_last_error());
		return -1;
	}
	if (qmp_first_thread_id(reply, &tid)) {
		snprintf(err, len, "domain %s: query-cpus-fast named no vCPU thread: %.200s", name,
			 reply);
		free(reply);
		return -1;
	}
	free(reply);
	pid = tgid_of(tid);
	if (pid <= 0)
		snprintf(err, len, "domain %s: its vCPU thread %ld is not a process here "
			 "(is libvirt's QEMU on another host or in another pid namespace?)", name, tid);
	return pid;
}

int lv_gpa2hva(virDomainPtr dom, uint64_t gpa, uint64_t *hva, char *err, size_t len)
{
	const char *name = virDomainGetName(dom);
	char cmd[64], *reply = NULL;

	snprintf(cmd, sizeof(cmd), "gpa2hva %#" PRIx64, gpa);
	if (virDomainQemuMonitorCommand(dom, cmd, &reply, VIR_DOMAIN_QEMU_MONITOR_COMMAND_HMP) < 0) {
		snprintf(err, len, "domain %s: gpa2hva through libvirt: %s", name, lv_last_error());
		return -1;
	}
	if (qmp_parse_gpa2hva(reply, gpa, hva)) {
		reply[strcspn(reply, "\r\n")] = 0;
		snprintf(err, len, "domain %s has no RAM at GPA %#" PRIx64 ": '%.200s'", name, gpa,
			 reply);
		free(reply);
		return -1;
	}
	free(reply);
	return 0;
}

/* every failure is reported once, by us, with what we were doing */
static void keep_quiet(void *opaque, virErrorPtr error)
{
	(void)opaque;
	(void)error;
}

virConnectPtr lv_open(const char *uri, char *err, size_t len)
{
	virConnectPtr conn;

	virSetErrorFunc(NULL, keep_quiet);
	/* before the connection: the embedded driver's monitors run on it */
	if (virEventRegisterDefaultImpl() < 0) {
		snprintf(err, len, "libvirt's event loop: %s", lv_last_error());
		return NULL;
	}
	conn = virConnectOpen(uri);
	if (!conn)
		snprintf(err, len, "cannot connect to libvirt at %s: %s", uri ? uri : "(default URI)",
			 lv_last_error());
	return conn;
}
