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
 * It runs as root and poisons whatever PFN it writes, so it trusts nothing
 * it did not check: the table must be the VMM's own (not a symlink, mode
 * 0600, owned by the VMM's uid, its pid header, every slot inside writable
 * mappings of a process whose exe is hwlab-vmm), and the page must be the
 * VMM's alone (not the zero page, not KSM, exclusively mapped), checked
 * again right before the write. It never faults a page in itself.
 *
 * --soak poisons N consecutive pages one at a time and waits for the guest's
 * acknowledgement of each (the VMM's guest_retired line) before the next,
 * then prints how long each took from the corrupt-pfn write.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "hwpoison_inject.h"
#include "log.h"
#include "memmap.h"
#include "parse_num.h"

#define PAGE 4096ULL

static const char *debugfs = HWLAB_DEBUGFS;
static int use_corrupt_va;	/* kernel patch 0002: by pid and address, no pagemap */

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

/* A memslot table names hwlab-vmm's guest RAM; any other program is a wrong pid. */
static void check_is_vmm(pid_t pid)
{
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
	if (strcmp(base, "hwlab-vmm"))
		die("pid %d is not a hwlab-vmm (it runs %s): refusing to poison it", (int)pid, exe);
}

/*
 * Open the table as a file only its VMM could have written: not through a
 * symlink (O_NOFOLLOW), a regular file (O_NONBLOCK: a FIFO must not hang
 * us before fstat can refuse it), owned by the VMM's uid, which must be
 * root or ours, and writable by nobody else (mode 0600).
 */
static FILE *open_table(const char *path, pid_t pid, uid_t vmm_uid)
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
	return f;
}

/* Every slot must be guest RAM of that very process: writable mappings of it. */
static void check_slots_mapped(const struct memmap *m, const char *path, pid_t pid)
{
	char maps_path[32], err[256];
	FILE *maps;

	snprintf(maps_path, sizeof(maps_path), "/proc/%d/maps", (int)pid);
	maps = fopen(maps_path, "r");
	if (!maps)
		die("cannot read %s: %s", maps_path, strerror(errno));
	if (memmap_check_maps(m, maps, err, sizeof(err)))
		die("memslot table %s does not match pid %d: %s", path, (int)pid, err);
	fclose(maps);
}

static void read_memmap(const char *path, pid_t pid, uid_t vmm_uid, struct memmap *m)
{
	char err[256];
	FILE *f = open_table(path, pid, vmm_uid);

	if (memmap_read(f, m, err, sizeof(err)))
		die("memslot table %s is malformed: %s", path, err);
	fclose(f);
	if (m->pid != pid)
		die("memslot table %s was written by pid %d, not %d: a stale table, refusing it",
		    path, (int)m->pid, (int)pid);
	check_slots_mapped(m, path, pid);
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
static uint64_t hva_to_pfn(pid_t pid, uint64_t hva, uint64_t gpa, unsigned int wait_s)
{
	uint64_t deadline = monotonic_ns() + wait_s * 1000000000ULL, pfn;
	enum page_verdict v;
	char err[256];

	while ((v = page_inspect(pid, hva, &pfn, err, sizeof(err))) == PAGE_NOT_PRESENT &&
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
static void recheck_pfn(pid_t pid, uint64_t hva, uint64_t gpa, uint64_t pfn)
{
	uint64_t now;
	char err[256];
	enum page_verdict v = page_inspect(pid, hva, &now, err, sizeof(err));

	if (v == PAGE_ERROR)
		die("%s", err);
	if (v != PAGE_OK || now != pfn)
		die("GPA %#" PRIx64 " (hva %#" PRIx64 ") changed under us: pfn %#" PRIx64
		    " became %#" PRIx64 " (%s): refusing to poison it", gpa, hva, pfn, now,
		    page_verdict_why(v));
}

static uint64_t poison(pid_t pid, const struct memmap *m, uint64_t gpa, unsigned int wait_s)
{
	uint64_t hva = gpa_to_hva(m, gpa, pid) & ~(PAGE - 1);
	/* also for --corrupt-va: the kernel would poison a zero page just as well */
	uint64_t pfn = hva_to_pfn(pid, hva, gpa, wait_s);
	uint64_t t = monotonic_ns();
	char err[300];
	int r;

	if (kill(pid, 0))
		die("pid %d is gone", pid);
	if (!use_corrupt_va)
		recheck_pfn(pid, hva, gpa, pfn);
	if (use_corrupt_va)
		r = hwpoison_corrupt_va(debugfs, pid, hva, err, sizeof(err));
	else
		r = hwpoison_corrupt_pfn(debugfs, pfn, err, sizeof(err));
	if (r)
		die("%s", err);
	printf("{\"event\":\"poison\",\"pid\":%d,\"gpa\":\"%#" PRIx64 "\",\"hva\":\"%#" PRIx64
	       "\",\"pfn\":\"%#" PRIx64 "\"}\n", pid, (uint64_t)(gpa & ~(PAGE - 1)), hva, pfn);
	fflush(stdout);
	return t;
}

/* Count the VMM report lines that hold both needles. */
static unsigned int count_in_log(const char *log, const char *a, const char *b)
{
	char line[1024];
	unsigned int n = 0;
	FILE *f = fopen(log, "r");

	if (!f)
		die("cannot read VMM report %s: %s", log, strerror(errno));
	while (fgets(line, sizeof(line), f))
		n += strstr(line, a) && strstr(line, b);
	fclose(f);
	return n;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The i-th page of the soak and the report fragment that names it. */
static uint64_t soak_page(uint64_t first, unsigned int i, char *needle, size_t len)
{
	uint64_t gpa = (first & ~(PAGE - 1)) + i * PAGE;

	snprintf(needle, len, "\"gpa\":\"%#" PRIx64 "\"", gpa);
	return gpa;
}

static int soak(pid_t pid, const struct memmap *m, uint64_t first,
		unsigned int events, const char *log, unsigned int wait_s)
{
	uint64_t *lat = calloc(events, sizeof(*lat));
	unsigned int i, acked = 0, dup = 0, lost = 0;
	char needle[64];

	if (!lat)
		die("out of memory");
	for (i = 0; i < events; i++) {
		uint64_t gpa = soak_page(first, i, needle, sizeof(needle)), t0, deadline;

		t0 = poison(pid, m, gpa, wait_s);
		deadline = t0 + 10ULL * 1000000000ULL;
		while (!count_in_log(log, "\"event\":\"guest_retired\"", needle) &&
		       monotonic_ns() < deadline)
			usleep(200);
		if (monotonic_ns() >= deadline) {
			lost++;
			continue;
		}
		lat[acked++] = monotonic_ns() - t0;
	}
	usleep(200 * 1000);	/* late duplicates would show by now */
	for (i = 0; i < events; i++) {
		soak_page(first, i, needle, sizeof(needle));
		dup += count_in_log(log, "\"event\":\"guest_retired\"", needle) > 1;
		dup += count_in_log(log, "\"action\":\"inject\"", needle) > 1;
	}
	qsort(lat, acked, sizeof(*lat), cmp_u64);
	printf("{\"event\":\"soak\",\"events\":%u,\"acked\":%u,\"lost\":%u,\"duplicated\":%u,"
	       "\"median_ns\":%" PRIu64 ",\"p99_ns\":%" PRIu64 ",\"max_ns\":%" PRIu64 "}\n",
	       events, acked, lost, dup, acked ? lat[acked / 2] : 0,
	       acked ? lat[(acked * 99 + 99) / 100 - 1] : 0, acked ? lat[acked - 1] : 0);
	free(lat);
	return lost || dup;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: hwpoison-guest [--memmap FILE] [--debugfs DIR] [--wait-present SECONDS] "
		   "[--corrupt-va] PID GPA\n"
		   "       hwpoison-guest --soak N --log VMM_REPORT [...] PID FIRST_GPA\n");
}

#define SOAK_MAX	1000000
#define WAIT_MAX	3600

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "memmap", 1, 0, 'm' }, { "debugfs", 1, 0, 'd' }, { "wait-present", 1, 0, 'w' },
		{ "soak", 1, 0, 's' }, { "log", 1, 0, 'l' }, { "corrupt-va", 0, 0, 'v' },
		{ "help", 0, 0, 'h' }, { 0, 0, 0, 0 },
	};
	const char *memmap_path = NULL, *log = NULL;
	char memmap_default[64];
	static struct memmap m;
	uint64_t gpa, pid, events = 0, wait_s = 0;
	uid_t vmm_uid;
	int c;

	log_prog = "hwpoison-guest";
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			memmap_path = optarg;
			break;
		case 'd':
			debugfs = optarg;
			break;
		case 'w':
			if (parse_u64(optarg, WAIT_MAX, &wait_s))
				die("--wait-present takes seconds from 0 to %d, not '%s'", WAIT_MAX,
				    optarg);
			break;
		case 'v':
			use_corrupt_va = 1;
			break;
		case 's':
			if (parse_u64(optarg, SOAK_MAX, &events) || !events)
				die("--soak takes a count from 1 to %d, not '%s'", SOAK_MAX, optarg);
			break;
		case 'l':
			log = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind + 2 != argc || (events && !log)) {
		usage(stderr);
		return 2;
	}
	if (parse_u64(argv[optind], HWLAB_PID_MAX, &pid) || !pid)
		die("'%s' is not a pid", argv[optind]);
	if (parse_u64(argv[optind + 1], UINT64_MAX, &gpa))
		die("'%s' is not a guest-physical address", argv[optind + 1]);
	if (kill(pid, 0) && errno == ESRCH)
		die("pid %d: no such process", (int)pid);
	vmm_uid = owner_of(pid);
	check_is_vmm(pid);
	if (!memmap_path) {
		memmap_default_path(memmap_default, sizeof(memmap_default), pid, vmm_uid);
		memmap_path = memmap_default;
	}
	read_memmap(memmap_path, pid, vmm_uid, &m);
	if (events)
		return soak(pid, &m, gpa, events, log, wait_s);
	poison(pid, &m, gpa, wait_s);
	return 0;
}
