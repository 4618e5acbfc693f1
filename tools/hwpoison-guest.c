// SPDX-License-Identifier: GPL-2.0
/*
 * hwpoison-guest: poison the host page behind a guest-physical address of a
 * running hwlab-vmm, the way a memory error would strike it: GPA -> HVA from
 * the VMM's published memslot table, HVA -> PFN from /proc/PID/pagemap, and
 * the PFN into the kernel's debugfs injector (hwpoison/corrupt-pfn), which
 * runs memory_failure() on it.
 *
 *   hwpoison-guest [options] PID GPA
 *   hwpoison-guest --soak N --log VMM_REPORT [options] PID FIRST_GPA
 *
 * --corrupt-va writes "PID HVA" to hwpoison/corrupt-va instead (kernel patch
 * 0002), which cannot hit a page that changed hands.
 *
 * --qmp SOCKET: PID is a QEMU, the reference VMM, and its own monitor says
 * where the GPA is (gpa2hva over the QMP socket); the same page checks and
 * write follow, so both VMMs are poisoned exactly alike.
 *
 *   hwpoison-guest [--connect URI] --domain NAME [options] GPA
 *   hwpoison-guest [--connect URI] --watch [--domain NAME] [--start XML]
 *
 * --domain: a QEMU run by libvirt, as its users run it: the pid and the
 * GPA -> HVA come through libvirt (libvirt_domain.c), then the same checks
 * and write. --watch prints libvirt's memory-failure events as report
 * lines (memory_failure_event.h) and takes "poison GPA" requests on stdin:
 * with the embedded driver (qemu:///embed?root=DIR) only the process that
 * started a domain (--start) can reach it. Only in the libvirt build
 * (HWLAB_LIBVIRT); the static one for the outer VM's base image has none.
 *
 * It runs as root and poisons whatever PFN it writes, so it trusts nothing
 * it did not check: the table must be the VMM's own (not a symlink, mode
 * 0600, owned by the VMM's uid, a process whose exe is hwlab-vmm, its
 * "# pid P start T" header that very process: its pid and start time; the
 * file one that process holds open, which only its writer can: a stale
 * table of a killed VMM whose pid was reused, or a copy, is refused), every
 * slot inside the guest RAM hwlab-vmm marks (VmFlags dd, and the name
 * [anon:hwlab-guest-ram] where the kernel names anonymous mappings: not its
 * .bss, heap or a thread's stack), and the page must be the VMM's alone
 * (not the zero page, not KSM, exclusively mapped). It never faults a page
 * in itself.
 *
 * The write's order: the injector is opened first (a regular file, on
 * debugfs unless --debugfs names a stand-in; O_NONBLOCK|O_NOFOLLOW, never
 * created), then the last checks (same process by start time, the page's
 * PFN unchanged and still exclusive, the table still held), then the write,
 * with nothing that can block in between. What no check can close: between
 * the last pagemap read and the kernel's memory_failure() on that PFN the
 * page can still change hands (freed by a VMM that exits, migrated,
 * merged): corrupt-pfn names a frame, not a mapping. --corrupt-va has no
 * such window: the kernel resolves pid and address itself.
 *
 * Test hook: with HWPOISON_GUEST_TEST_STOP_BEFORE_RECHECK set in the
 * environment the tool stops itself (SIGSTOP) with the injector open,
 * before the last checks, so a test can change the target there and see
 * the write refused; it only pauses.
 *
 * --soak poisons N consecutive pages one at a time and waits for the guest's
 * acknowledgement of each (the VMM's guest_retired line) before the next,
 * then prints how long each took from the corrupt-pfn write.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "hwpoison_guest_options.h"
#include "hwpoison_inject.h"
#include "log.h"
#include "memmap.h"
#include "parse_num.h"
#include "qmp.h"
#ifdef HWLAB_LIBVIRT
#include <sys/wait.h>

#include "libvirt_domain.h"
#endif

#define PAGE 4096ULL

/* One run of the tool: its command line and what its checks hold on to. */
struct hwpoison_guest {
	struct hwpoison_guest_options opt;
	const char *target_exe;		/* "hwlab-vmm", or a QEMU's for --qmp and --domain */
	unsigned long long vmm_start_time;	/* of the process the checks were made on */
	/* the table the checks were made on, kept open: its inode cannot be reused */
	const char *table_path;
	struct stat table_st;
};

/* The uid that owns /proc/PID: the process's (effective) uid. */
static uid_t owner_of(pid_t pid)
{
	char path[32];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (stat(path, &st))
		die("pid %d: %s: %s", (int)pid, path, strerror(errno));
	return st.st_uid;
}

/*
 * A memslot table names hwlab-vmm's guest RAM, a QMP socket or a libvirt
 * domain a QEMU's; any other program is a wrong pid.
 */
static void check_is_vmm(const struct hwpoison_guest *g, pid_t pid)
{
	const char *want = g->target_exe;
	char path[32], exe[PATH_MAX];
	ssize_t n;
	const char *base;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n < 0)
		die("pid %d: cannot read %s: %s", (int)pid, path, strerror(errno));
	exe[n] = 0;
	base = strrchr(exe, '/');
	base = base ? base + 1 : exe;
	if (strcmp(base, want))
		die("pid %d is not a %s (it runs %s): refusing to poison it", (int)pid, want, exe);
}

/*
 * Right before each write: pid is still the process every check was made
 * on. In a long --soak the VMM may exit and its pid be reused by another
 * process, whose memory the next lookups would then describe.
 */
static void check_same_process(const struct hwpoison_guest *g, pid_t pid)
{
	if (proc_start_time(pid) != g->vmm_start_time)
		die("pid %d is no longer the hwlab-vmm it was (it exited, or its pid was "
		    "reused): refusing to poison", (int)pid);
}

/*
 * Open the table as a file only its VMM could have written: not through a
 * symlink (O_NOFOLLOW), a regular file (O_NONBLOCK: a FIFO must not hang
 * us before fstat can refuse it), owned by the VMM's uid, which must be
 * root or ours, and writable by nobody else (mode 0600).
 */
static FILE *open_table(const char *path, pid_t pid, uid_t vmm_uid, struct stat *table)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	FILE *f;

	if (fd < 0 && errno == ELOOP)
		die("memslot table %s is a symbolic link: refusing to follow it", path);
	if (fd < 0)
		die("no memslot table %s for pid %d (%s): is it a running hwlab-vmm?", path,
		    (int)pid, strerror(errno));
	if (fstat(fd, &st))
		die("fstat %s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		die("memslot table %s is not a regular file: refusing it", path);
	if (st.st_uid != vmm_uid)
		die("memslot table %s is owned by uid %u, but pid %d runs as uid %u: not its "
		    "table, refusing it", path, (unsigned int)st.st_uid, (int)pid,
		    (unsigned int)vmm_uid);
	if (st.st_uid != 0 && st.st_uid != geteuid())
		die("memslot table %s is owned by uid %u, neither root nor us (uid %u): "
		    "refusing it", path, (unsigned int)st.st_uid, (unsigned int)geteuid());
	if ((st.st_mode & 07777) != 0600)
		die("memslot table %s has mode %04o, not 0600: others could have written it, "
		    "refusing it", path, (unsigned int)(st.st_mode & 07777));
	f = fdopen(fd, "r");
	if (!f)
		die("fdopen %s: %s", path, strerror(errno));
	*table = st;
	return f;
}

#ifndef PR_SET_VMA
#define PR_SET_VMA		0x53564d41
#define PR_SET_VMA_ANON_NAME	0
#endif

/*
 * Does this kernel name anonymous mappings (CONFIG_ANON_VMA_NAME)? Asked
 * of a page of our own: then hwlab-vmm's guest RAM must carry its name.
 */
static int kernel_names_anon_vmas(void)
{
	void *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int named;

	if (p == MAP_FAILED)
		die("mmap of a probe page: %s", strerror(errno));
	named = !prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)p, PAGE,
		       (unsigned long)"hwpoison-guest-probe");
	munmap(p, PAGE);
	return named;
}

/*
 * Every slot must be guest RAM of that very process (lib/memmap.h: which
 * mappings are, for hwlab-vmm and for QEMU). smaps rather than maps: its
 * VmFlags say "dd" (hwlab-vmm's mark) and "ht" (hugetlb, which tells
 * QEMU's private hugetlbfs file mapping for a libvirt <hugepages/> guest
 * from a private mapping of any other file).
 */
static void check_slots_mapped(const struct hwpoison_guest *g, const struct memmap *m,
			       const char *path, pid_t pid)
{
	char maps_path[32], err[300];
	enum guest_ram_rule rule = RAM_RULE_QEMU;
	FILE *maps;

	if (!strcmp(g->target_exe, "hwlab-vmm"))
		rule = kernel_names_anon_vmas() ? RAM_RULE_HWLAB_NAMED : RAM_RULE_HWLAB;
	snprintf(maps_path, sizeof(maps_path), "/proc/%d/smaps", (int)pid);
	maps = fopen(maps_path, "r");
	if (!maps)
		die("cannot read %s: %s", maps_path, strerror(errno));
	if (memmap_check_maps(m, maps, rule, err, sizeof(err)))
		die("memslot table %s does not match pid %d: %s", path, (int)pid, err);
	fclose(maps);
}

/*
 * The table must be the one the live process pid wrote and still holds
 * open (lib/memmap.h): a table left behind by a killed VMM, or a copy,
 * never speaks for a process that got its pid later.
 */
static void check_table_held(const struct hwpoison_guest *g, pid_t pid)
{
	char err[128];
	int r;

	if (!g->table_path)
		return;
	r = memmap_held_by(pid, &g->table_st, err, sizeof(err));
	if (r < 0)
		die("pid %d: %s: cannot tell whether it holds memslot table %s (did it exit?): "
		    "refusing to poison", (int)pid, err, g->table_path);
	if (!r)
		die("memslot table %s is not open in pid %d: it is not the table that process "
		    "published (one left behind by an earlier process, or a copy): refusing it",
		    g->table_path, (int)pid);
}

static void read_memmap(struct hwpoison_guest *g, const char *path, pid_t pid, uid_t vmm_uid,
			struct memmap *m)
{
	char err[256];
	/* never closed: open, its inode is not reused while the checks hold */
	FILE *f = open_table(path, pid, vmm_uid, &g->table_st);

	if (memmap_read(f, m, err, sizeof(err)))
		die("memslot table %s is malformed: %s", path, err);
	if (m->pid != pid)
		die("memslot table %s was written by pid %d, not %d: a stale table, refusing it",
		    path, (int)m->pid, (int)pid);
	if (m->start != g->vmm_start_time)
		die("memslot table %s was written by a pid %d that started at %llu, but pid %d "
		    "now is a process that started at %llu: a stale table of an earlier process, "
		    "refusing it", path, (int)pid, m->start, (int)pid, g->vmm_start_time);
	check_slots_mapped(g, m, path, pid);
	g->table_path = path;
	check_table_held(g, pid);
}

/*
 * QEMU's answer for one page (hva), as a one-slot table, checked like
 * hwlab-vmm's: the HVA must lie in a writable mapping of that very process.
 */
static void qemu_page_slot(const struct hwpoison_guest *g, pid_t pid, uint64_t page,
			   uint64_t hva, const char *source, struct memmap *m)
{
	*m = (struct memmap) { .pid = pid, .count = 1 };
	m->slots[0] = (struct memmap_slot) { .gpa = page, .size = PAGE, .hva = hva };
	strcpy(m->slots[0].backing, "qemu");
	check_slots_mapped(g, m, source, pid);
}

static void read_qmp(const struct hwpoison_guest *g, pid_t pid, uint64_t gpa, struct memmap *m)
{
	char cmd[64], text[512], err[512];
	uint64_t page = gpa & ~(PAGE - 1), hva;

	snprintf(cmd, sizeof(cmd), "gpa2hva %#" PRIx64, page);
	if (qmp_hmp(g->opt.qmp_socket, cmd, text, sizeof(text), err, sizeof(err)))
		die("%s", err);
	if (qmp_parse_gpa2hva(text, page, &hva)) {
		text[strcspn(text, "\r\n")] = 0;
		die("QEMU pid %d has no RAM at GPA %#" PRIx64 ": '%s'", (int)pid, page, text);
	}
	qemu_page_slot(g, pid, page, hva, g->opt.qmp_socket, m);
}

static uint64_t gpa_to_hva(const struct memmap *m, uint64_t gpa, pid_t pid)
{
	const struct memmap_slot *s = memmap_find_gpa(m, gpa), *last = &m->slots[m->count - 1];

	if (!s)
		die("GPA %#" PRIx64 " is not in the guest RAM of pid %d (RAM ends at %#" PRIx64 ")",
		    gpa, pid, last->gpa + last->size);
	return s->hva + (gpa - s->gpa);
}

/*
 * The PFN behind hva, if the page is the VMM's alone (lib: page_inspect).
 * With wait_s, a page the guest has not touched yet is polled for until
 * it has: the tool never faults a page in itself, since a read fault maps
 * the shared zero page and a write through /proc/PID/mem could undo a
 * store the guest makes at the same time.
 */
/* Whether gpa is in a slot of hwlab-vmm's shared hugetlb memfd (page_classify_ram()). */
static int in_shared_hugetlb(const struct memmap *m, uint64_t gpa)
{
	const struct memmap_slot *s = memmap_find_gpa(m, gpa);

	return s && !strcmp(s->backing, "hugetlb-shared");
}

/*
 * A page of a shared file is the VMM's alone only if no other process
 * holds the file: one that has it open, or mapped without having touched
 * this page yet, would take the poison later (pagemap's exclusive bit
 * counts only the mappings faulted in now).
 */
static void check_file_not_held_elsewhere(pid_t pid, uint64_t hva, uint64_t gpa)
{
	char err[256];
	pid_t holder = 0;
	int r = memmap_file_held_elsewhere(pid, hva, &holder, err, sizeof(err));

	if (r < 0)
		die("GPA %#" PRIx64 ": %s", gpa, err);
	if (r)
		die("GPA %#" PRIx64 " (hva %#" PRIx64 ") is in guest RAM that pid %d shares with "
		    "pid %d, which holds the same file: refusing to poison it", gpa, hva, pid,
		    (int)holder);
}

static uint64_t hva_to_pfn(pid_t pid, uint64_t hva, uint64_t gpa, int shared_hugetlb,
			   unsigned int wait_s)
{
	uint64_t deadline = monotonic_ns() + wait_s * 1000000000ULL, pfn;
	enum page_verdict v;
	char err[256];

	while ((v = page_inspect_ram(pid, hva, shared_hugetlb, &pfn, err, sizeof(err))) ==
	       PAGE_NOT_PRESENT &&
	       monotonic_ns() < deadline)
		usleep(10 * 1000);
	if (v == PAGE_ERROR)
		die("%s", err);
	if (v == PAGE_NOT_PRESENT && wait_s)
		die("GPA %#" PRIx64 " (hva %#" PRIx64 ") is still not present after %u s: the "
		    "guest never touched it", gpa, hva, wait_s);
	if (v == PAGE_NOT_PRESENT)
		die("GPA %#" PRIx64 " (hva %#" PRIx64 ") is not present: the guest never touched "
		    "it (--wait-present SECONDS waits for it to)", gpa, hva);
	if (v != PAGE_OK)
		die("GPA %#" PRIx64 " (hva %#" PRIx64 ", pfn %#" PRIx64 ") of pid %d is %s: "
		    "refusing to poison it", gpa, hva, pfn, pid, page_verdict_why(v));
	return pfn;
}

/*
 * Between the lookup and the write the page can change hands (the guest
 * reset and the VMM remapped it, the kernel migrated or merged it): look
 * again right before writing, and refuse if it is not the same page, still
 * the VMM's alone.
 */
static void recheck_pfn(pid_t pid, uint64_t hva, uint64_t gpa, int shared_hugetlb, uint64_t pfn)
{
	uint64_t now;
	char err[256];
	enum page_verdict v = page_inspect_ram(pid, hva, shared_hugetlb, &now, err, sizeof(err));

	if (v == PAGE_ERROR)
		die("%s", err);
	if (v != PAGE_OK || now != pfn)
		die("GPA %#" PRIx64 " (hva %#" PRIx64 ") changed under us: pfn %#" PRIx64
		    " became %#" PRIx64 " (%s): refusing to poison it", gpa, hva, pfn, now,
		    page_verdict_why(v));
}

/*
 * Test hook (documented in the header comment): stop after the injector is
 * open and before the last checks, so a test can change the target there
 * (kill the VMM) and see the write refused. It only pauses the tool.
 */
#define TEST_STOP_ENV	"HWPOISON_GUEST_TEST_STOP_BEFORE_RECHECK"

static uint64_t poison(const struct hwpoison_guest *g, pid_t pid, const struct memmap *m,
		       uint64_t gpa)
{
	int use_corrupt_va = g->opt.corrupt_va;
	uint64_t hva = gpa_to_hva(m, gpa, pid) & ~(PAGE - 1);
	/* also for --corrupt-va: the kernel would poison a zero page just as well */
	int shared_hugetlb = in_shared_hugetlb(m, gpa);
	uint64_t pfn = hva_to_pfn(pid, hva, gpa, shared_hugetlb, g->opt.wait_present_s);
	uint64_t t;
	char err[300];
	int fd, r;

	/*
	 * The injector first: whatever may block or take long (a FIFO planted
	 * there, a slow path) happens before the last checks, not between them
	 * and the write.
	 */
	fd = hwpoison_open_injector(g->opt.debugfs, use_corrupt_va ? "corrupt-va" : "corrupt-pfn",
				    err, sizeof(err));
	if (fd < 0)
		die("%s", err);
	if (getenv(TEST_STOP_ENV))
		raise(SIGSTOP);
	/*
	 * The last checks, right before the write: pid is still the process
	 * every check was made on (first, for the clear message when it is
	 * gone), the page is still the same and the VMM's alone (corrupt-va
	 * resolves pid and address in the kernel instead), and, after that
	 * pagemap read, still the same process, holding its table.
	 */
	check_same_process(g, pid);
	if (shared_hugetlb)
		check_file_not_held_elsewhere(pid, hva, gpa);
	if (!use_corrupt_va)
		recheck_pfn(pid, hva, gpa, shared_hugetlb, pfn);
	check_same_process(g, pid);
	check_table_held(g, pid);
	/* t_ns: just before the write, the start of every latency measured from it */
	t = monotonic_ns();
	if (use_corrupt_va)
		r = hwpoison_write_va(fd, pid, hva, err, sizeof(err));
	else
		r = hwpoison_write_pfn(fd, pfn, err, sizeof(err));
	if (r)
		die("%s", err);
	printf("{\"event\":\"poison\",\"pid\":%d,\"gpa\":\"%#" PRIx64 "\",\"hva\":\"%#" PRIx64
	       "\",\"pfn\":\"%#" PRIx64 "\",\"t_ns\":%" PRIu64 "}\n", pid,
	       (uint64_t)(gpa & ~(PAGE - 1)), hva, pfn, t);
	fflush(stdout);
	return t;
}

/*
 * The soak follows the VMM's report as it grows, reading each line once
 * (re-reading the whole file for every poll made the tool itself the slow
 * part of an event as the log grew), and lines each event up on the one
 * CLOCK_MONOTONIC: the tool's write, the VMM's SIGBUS handler, its
 * injection report, and the guest's acknowledgement.
 */
struct soak_event {
	uint64_t t_write;	/* tool: just before the corrupt-pfn write */
	uint64_t t_signal;	/* VMM: SIGBUS handler (signal_t_ns) */
	uint64_t t_queued;	/* VMM, AO: the monitor queued it for a vCPU (queued_t_ns) */
	uint64_t t_inject;	/* VMM: injection reported (t_ns of the inject line) */
	uint64_t t_retired;	/* VMM: the guest's RETIRED ucall reported */
	uint64_t t_seen;	/* tool: saw the guest_retired line */
	unsigned int injected, retired;
	int ar;			/* the injection was an AR: the guest touched it first */
};

struct soak {
	FILE *log;
	uint64_t first;
	unsigned int events;
	struct soak_event *ev;
};

/* The number after "key": (decimal, or a quoted 0x... string); 0 if absent. */
static uint64_t json_u64(const char *line, const char *key)
{
	char pat[48];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(line, pat);
	if (!p)
		return 0;
	p += strlen(pat);
	if (*p == '"')
		p++;
	return strtoull(p, NULL, 0);
}

static void soak_account(struct soak *sk, const char *line, uint64_t now)
{
	int retired = strstr(line, "\"event\":\"guest_retired\"") != NULL;
	int inject = strstr(line, "\"event\":\"sigbus\"") && strstr(line, "\"action\":\"inject\"");
	uint64_t gpa = json_u64(line, "gpa");
	struct soak_event *e;

	if ((!retired && !inject) || gpa < sk->first || (gpa - sk->first) / PAGE >= sk->events)
		return;
	e = &sk->ev[(gpa - sk->first) / PAGE];
	if (inject && !e->injected++) {
		e->t_signal = json_u64(line, "signal_t_ns");
		e->t_queued = json_u64(line, "queued_t_ns");
		e->t_inject = json_u64(line, "t_ns");
		e->ar = strstr(line, "BUS_MCEERR_AR") != NULL;
	}
	if (retired && !e->retired++) {
		e->t_retired = json_u64(line, "t_ns");
		e->t_seen = now;
	}
}

/* Account every complete line the VMM has added since the last call. */
static void soak_follow(struct soak *sk)
{
	char line[1024];

	for (;;) {
		long at = ftell(sk->log);

		if (!fgets(line, sizeof(line), sk->log)) {
			clearerr(sk->log);
			return;
		}
		if (!strchr(line, '\n')) {
			/* a line still being written: read it whole next time */
			fseek(sk->log, at, SEEK_SET);
			clearerr(sk->log);
			return;
		}
		soak_account(sk, line, monotonic_ns());
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sort v (n values); the smallest value with at least num/den of them at or below it. */
static uint64_t quantile(uint64_t *v, unsigned int n, unsigned int num, unsigned int den)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u64);
	return v[((uint64_t)n * num + den - 1) / den - 1];
}

static uint64_t span(uint64_t from, uint64_t to)
{
	return from && to > from ? to - from : 0;
}

static void soak_print(const struct soak *sk, unsigned int lost, unsigned int dup)
{
	uint64_t *total = calloc(sk->events, sizeof(*total)), *part = calloc(sk->events,
									  sizeof(*part));
	uint64_t med[4], p50, p99;
	unsigned int i, n = 0, slow = 0, ar = 0, k;
	const struct soak_event *s;

	if (!total || !part)
		die("out of memory");
	for (i = 0; i < sk->events; i++) {
		const struct soak_event *e = &sk->ev[i];

		if (!e->retired)
			continue;
		total[n++] = e->t_seen - e->t_write;
		ar += e->ar;
		if (e->t_seen - e->t_write > sk->ev[slow].t_seen - sk->ev[slow].t_write ||
		    !sk->ev[slow].retired)
			slow = i;
	}
	/*
	 * the median of each stage: write->signal (kernel), signal->inject (VMM;
	 * for an AO also split at the monitor queueing it: vmm_monitor_ns is
	 * the monitor's wakeup, vmm_vcpu_ns the vCPU's next exit), inject->ack
	 * (guest), ack->seen (tool)
	 */
	for (k = 0; k < 4; k++) {
		unsigned int m = 0;

		for (i = 0; i < sk->events; i++) {
			const struct soak_event *e = &sk->ev[i];
			uint64_t t[5] = { e->t_write, e->t_signal, e->t_inject, e->t_retired, e->t_seen };

			if (e->retired)
				part[m++] = span(t[k], t[k + 1]);
		}
		med[k] = quantile(part, m, 1, 2);
	}
	s = &sk->ev[slow];
	/* sorted here, before total[n - 1] is read as the maximum */
	p50 = quantile(total, n, 1, 2);
	p99 = quantile(total, n, 99, 100);
	printf("{\"event\":\"soak\",\"events\":%u,\"acked\":%u,\"lost\":%u,\"duplicated\":%u,"
	       "\"ar\":%u,\"median_ns\":%" PRIu64 ",\"p99_ns\":%" PRIu64 ",\"max_ns\":%" PRIu64 ","
	       "\"median_kernel_ns\":%" PRIu64 ",\"median_vmm_ns\":%" PRIu64 ","
	       "\"median_guest_ns\":%" PRIu64 ",\"median_tool_ns\":%" PRIu64 ","
	       "\"slowest\":{\"gpa\":\"%#" PRIx64 "\",\"si_code\":\"%s\",\"total_ns\":%" PRIu64 ","
	       "\"kernel_ns\":%" PRIu64 ",\"vmm_ns\":%" PRIu64 ",\"guest_ns\":%" PRIu64 ","
	       "\"tool_ns\":%" PRIu64 ",\"vmm_monitor_ns\":%" PRIu64 ",\"vmm_vcpu_ns\":%" PRIu64
	       "}}\n",
	       sk->events, n, lost, dup, ar, p50, p99, n ? total[n - 1] : 0, med[0], med[1], med[2], med[3],
	       (uint64_t)(sk->first + slow * PAGE), s->ar ? "BUS_MCEERR_AR" : "BUS_MCEERR_AO",
	       span(s->t_write, s->t_seen), span(s->t_write, s->t_signal),
	       span(s->t_signal, s->t_inject), span(s->t_inject, s->t_retired),
	       span(s->t_retired, s->t_seen), span(s->t_signal, s->t_queued),
	       span(s->t_queued, s->t_inject));
	free(total);
	free(part);
}

static int soak(const struct hwpoison_guest *g, pid_t pid, const struct memmap *m,
		uint64_t first)
{
	unsigned int events = g->opt.soak_events;
	const char *log = g->opt.soak_log;
	struct soak sk = { .first = first & ~(PAGE - 1), .events = events };
	unsigned int i, lost = 0, dup = 0;

	sk.ev = calloc(events, sizeof(*sk.ev));
	sk.log = fopen(log, "r");
	if (!sk.ev)
		die("out of memory");
	if (!sk.log)
		die("cannot read VMM report %s: %s", log, strerror(errno));
	for (i = 0; i < events; i++) {
		struct soak_event *e = &sk.ev[i];
		uint64_t deadline;

		e->t_write = poison(g, pid, m, sk.first + i * PAGE);
		/* a bound for a lost event, not a delay: the loop ends on the line */
		deadline = e->t_write + 10ULL * 1000000000ULL;
		for (;;) {
			soak_follow(&sk);
			if (e->retired || monotonic_ns() >= deadline)
				break;
			usleep(100);
		}
		lost += !e->retired;
	}
	soak_follow(&sk);
	for (i = 0; i < events; i++)
		dup += (sk.ev[i].retired > 1) + (sk.ev[i].injected > 1);
	soak_print(&sk, lost, dup);
	fclose(sk.log);
	free(sk.ev);
	return lost || dup;
}

#ifdef HWLAB_LIBVIRT
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
		fprintf(stderr, "hwpoison-guest: error: %s\n", err);
		return 1;
	}
	started = proc_start_time(pid);
	if (lv_gpa2hva(dom, page, &hva, err, sizeof(err))) {
		fprintf(stderr, "hwpoison-guest: error: %s\n", err);
		return 1;
	}
	again = lv_qemu_pid(dom, err, sizeof(err));
	if (again != pid || proc_start_time(pid) != started) {
		fprintf(stderr, "hwpoison-guest: error: domain %s's QEMU changed (pid %d, now %d) "
			"while its page was looked up: refusing to poison\n", virDomainGetName(dom),
			(int)pid, (int)again);
		return 1;
	}
	fflush(stdout);
	child = fork();
	if (child < 0) {
		fprintf(stderr, "hwpoison-guest: error: fork: %s\n", strerror(errno));
		return 1;
	}
	if (child == 0) {
		static struct memmap m;
		char source[300];

		g->vmm_start_time = started;
		check_is_vmm(g, pid);
		snprintf(source, sizeof(source), "libvirt domain %s", virDomainGetName(dom));
		qemu_page_slot(g, pid, page, hva, source, &m);
		poison(g, pid, &m, gpa);
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
#endif

int main(int argc, char **argv)
{
	struct hwpoison_guest g = { .target_exe = "hwlab-vmm" };
	const struct hwpoison_guest_options *o = &g.opt;
	const char *memmap_path;
	char memmap_default[64];
	static struct memmap m;
	uint64_t gpa, pid;
	uid_t vmm_uid;
	int rc;

	log_prog = "hwpoison-guest";
	rc = hwpoison_guest_parse(argc, argv, &g.opt);
	if (rc)
		return rc;
	if (o->help) {
		hwpoison_guest_usage(stdout);
		return 0;
	}
	if (hwpoison_guest_uses_libvirt(o)) {
#ifdef HWLAB_LIBVIRT
		g.target_exe = "qemu-system-x86_64";
		if (o->watch) {
			struct lv_watch_options wo = { .uri = o->uri, .domain = o->domain,
						       .start_xml = o->start_xml,
						       .poison = poison_domain_page, .ctx = &g };

			return lv_watch(&wo);
		}
		if (parse_u64(o->operands[0], UINT64_MAX, &gpa))
			die("'%s' is not a guest-physical address", o->operands[0]);
		return poison_domain(&g, gpa);
#else
		die("this hwpoison-guest was built without libvirt (the static build for the outer "
		    "VM's base image): use build/hwpoison-guest");
#endif
	}
	if (parse_u64(o->operands[0], HWLAB_PID_MAX, &pid) || !pid)
		die("'%s' is not a pid", o->operands[0]);
	if (parse_u64(o->operands[1], UINT64_MAX, &gpa))
		die("'%s' is not a guest-physical address", o->operands[1]);
	if (kill(pid, 0) && errno == ESRCH)
		die("pid %d: no such process", (int)pid);
	/* first: every check below is then known to be about this process */
	g.vmm_start_time = proc_start_time(pid);
	if (!g.vmm_start_time)
		die("pid %d: cannot read /proc/%d/stat", (int)pid, (int)pid);
	vmm_uid = owner_of(pid);
	if (o->qmp_socket)
		g.target_exe = "qemu-system-x86_64";
	check_is_vmm(&g, pid);
	if (o->qmp_socket) {
		read_qmp(&g, pid, gpa, &m);
		poison(&g, pid, &m, gpa);
		return 0;
	}
	memmap_path = o->memmap_path;
	if (!memmap_path) {
		memmap_default_path(memmap_default, sizeof(memmap_default), pid, vmm_uid);
		memmap_path = memmap_default;
	}
	read_memmap(&g, memmap_path, pid, vmm_uid, &m);
	if (o->soak_events)
		return soak(&g, pid, &m, gpa);
	poison(&g, pid, &m, gpa);
	return 0;
}
