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
 * 0002), which needs no pagemap and cannot hit a page that changed hands.
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

static void read_memmap(const char *path, pid_t pid, struct memmap *m)
{
	char err[128];
	FILE *f = fopen(path, "r");

	if (!f)
		die("no memslot table %s for pid %d (%s): is it a running hwlab-vmm?", path, pid,
		    strerror(errno));
	if (memmap_read(f, m, err, sizeof(err)))
		die("memslot table %s is malformed: %s", path, err);
	fclose(f);
	if (m->pid && m->pid != pid)
		die("memslot table %s was written by pid %d, not %d", path, (int)m->pid, pid);
}

static uint64_t gpa_to_hva(const struct memmap *m, uint64_t gpa, pid_t pid)
{
	const struct memmap_slot *s = memmap_find_gpa(m, gpa), *last = &m->slots[m->count - 1];

	if (!s)
		die("GPA %#" PRIx64 " is not in the guest RAM of pid %d (RAM ends at %#" PRIx64 ")",
		    gpa, pid, last->gpa + last->size);
	return s->hva + (gpa - s->gpa);
}

/* Fault the page in by rewriting its first byte through /proc/PID/mem. */
static void touch(pid_t pid, uint64_t hva)
{
	char path[64], c;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDWR);
	if (fd < 0 || pread(fd, &c, 1, hva) != 1 || pwrite(fd, &c, 1, hva) != 1)
		die("cannot touch hva %#" PRIx64 " of pid %d through %s: %s", hva, pid, path,
		    strerror(errno));
	close(fd);
}

static uint64_t hva_to_pfn(pid_t pid, uint64_t hva, uint64_t gpa, int may_touch)
{
	char err[256];
	uint64_t pfn;

	for (;;) {
		switch (pagemap_lookup(pid, hva, &pfn, err, sizeof(err))) {
		case PAGEMAP_PRESENT:
			return pfn;
		case PAGEMAP_SWAPPED:
			die("GPA %#" PRIx64 " is swapped out; nothing to poison", gpa);
		case PAGEMAP_NOT_PRESENT:
			if (!may_touch)
				die("GPA %#" PRIx64 " (hva %#" PRIx64 ") is not present: the guest "
				    "never touched it (use --touch to fault it in first)", gpa, hva);
			touch(pid, hva);
			may_touch = 0;
			break;
		default:
			die("%s", err);
		}
	}
}

static uint64_t poison(pid_t pid, const struct memmap *m, uint64_t gpa, int may_touch)
{
	uint64_t hva = gpa_to_hva(m, gpa, pid) & ~(PAGE - 1);
	uint64_t pfn = use_corrupt_va ? 0 : hva_to_pfn(pid, hva, gpa, may_touch);
	uint64_t t = monotonic_ns();
	char err[300];
	int r;

	if (kill(pid, 0))
		die("pid %d is gone", pid);
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
		unsigned int events, const char *log, int may_touch)
{
	uint64_t *lat = calloc(events, sizeof(*lat));
	unsigned int i, acked = 0, dup = 0, lost = 0;
	char needle[64];

	if (!lat)
		die("out of memory");
	for (i = 0; i < events; i++) {
		uint64_t gpa = soak_page(first, i, needle, sizeof(needle)), t0, deadline;

		t0 = poison(pid, m, gpa, may_touch);
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
	fprintf(f, "usage: hwpoison-guest [--memmap FILE] [--debugfs DIR] [--touch] [--corrupt-va] "
		   "PID GPA\n"
		   "       hwpoison-guest --soak N --log VMM_REPORT [...] PID FIRST_GPA\n");
}

/* The kernel's PID_MAX_LIMIT on 64-bit; pid_max cannot be set above it. */
#define PID_MAX_LIMIT	(4 * 1024 * 1024)
#define SOAK_MAX	1000000

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "memmap", 1, 0, 'm' }, { "debugfs", 1, 0, 'd' }, { "touch", 0, 0, 't' },
		{ "soak", 1, 0, 's' }, { "log", 1, 0, 'l' }, { "corrupt-va", 0, 0, 'v' },
		{ "help", 0, 0, 'h' }, { 0, 0, 0, 0 },
	};
	const char *memmap_path = NULL, *log = NULL;
	char memmap_default[64];
	static struct memmap m;
	int may_touch = 0, c;
	uint64_t gpa, pid, events = 0;

	log_prog = "hwpoison-guest";
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			memmap_path = optarg;
			break;
		case 'd':
			debugfs = optarg;
			break;
		case 't':
			may_touch = 1;
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
	if (parse_u64(argv[optind], PID_MAX_LIMIT, &pid) || !pid)
		die("'%s' is not a pid", argv[optind]);
	if (parse_u64(argv[optind + 1], UINT64_MAX, &gpa))
		die("'%s' is not a guest-physical address", argv[optind + 1]);
	if (kill(pid, 0) && errno == ESRCH)
		die("pid %d: no such process", (int)pid);
	if (!memmap_path) {
		memmap_default_path(memmap_default, sizeof(memmap_default), pid, owner_of(pid));
		memmap_path = memmap_default;
	}
	read_memmap(memmap_path, pid, &m);
	if (events)
		return soak(pid, &m, gpa, events, log, may_touch);
	poison(pid, &m, gpa, may_touch);
	return 0;
}
