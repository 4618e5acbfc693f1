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
#include <time.h>
#include <unistd.h>

#include "hwlab_abi.h"

#define PAGE 4096ULL

struct slot {
	uint64_t gpa, size, hva;
};

static const char *debugfs = "/sys/kernel/debug";
static int use_corrupt_va;	/* kernel patch 0002: by pid and address, no pagemap */

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
#include <stdarg.h>
static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "hwpoison-guest: error: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static unsigned int read_memmap(const char *path, pid_t pid, struct slot *slots, unsigned int max)
{
	char line[256];
	unsigned int n = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		die("no memslot table %s for pid %d (%s): is it a running hwlab-vmm?", path, pid,
		    strerror(errno));
	while (fgets(line, sizeof(line), f) && n < max) {
		unsigned int id;

		if (line[0] == '#')
			continue;
		if (sscanf(line, "%u %" SCNx64 " %" SCNx64 " %" SCNx64, &id, &slots[n].gpa,
			   &slots[n].size, &slots[n].hva) == 4)
			n++;
	}
	fclose(f);
	if (!n)
		die("memslot table %s is empty or malformed", path);
	return n;
}

static uint64_t gpa_to_hva(const struct slot *s, unsigned int n, uint64_t gpa, pid_t pid)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (gpa >= s[i].gpa && gpa - s[i].gpa < s[i].size)
			return s[i].hva + (gpa - s[i].gpa);
	die("GPA %#" PRIx64 " is not in the guest RAM of pid %d (RAM ends at %#" PRIx64 ")", gpa,
	    pid, s[n - 1].gpa + s[n - 1].size);
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
	char path[64];
	uint64_t entry;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/pagemap", pid);
	for (;;) {
		fd = open(path, O_RDONLY);
		if (fd < 0)
			die("cannot open %s: %s", path, strerror(errno));
		if (pread(fd, &entry, sizeof(entry), hva / PAGE * sizeof(entry)) != sizeof(entry))
			die("cannot read %s: %s", path, strerror(errno));
		close(fd);
		if (entry & (1ULL << 63))
			break;
		if (entry & (1ULL << 62))
			die("GPA %#" PRIx64 " is swapped out; nothing to poison", gpa);
		if (!may_touch)
			die("GPA %#" PRIx64 " (hva %#" PRIx64 ") is not present: the guest never "
			    "touched it (use --touch to fault it in first)", gpa, hva);
		touch(pid, hva);
		may_touch = 0;
	}
	entry &= (1ULL << 55) - 1;
	if (!entry)
		die("%s shows no PFNs: reading them needs CAP_SYS_ADMIN (run as root)", path);
	return entry;
}

static void corrupt_pfn(uint64_t pfn)
{
	char path[256], buf[32];
	int fd, len;

	snprintf(path, sizeof(path), "%s/hwpoison/corrupt-pfn", debugfs);
	fd = open(path, O_WRONLY);
	if (fd < 0) {
		struct stat st;
		char dir[256];

		snprintf(dir, sizeof(dir), "%s/hwpoison", debugfs);
		if (errno == ENOENT && stat(dir, &st))
			die("%s does not exist: mount debugfs (mount -t debugfs none %s) on a "
			    "kernel with CONFIG_HWPOISON_INJECT", dir, debugfs);
		die("cannot open %s: %s", path, strerror(errno));
	}
	len = snprintf(buf, sizeof(buf), "%#" PRIx64 "\n", pfn);
	if (write(fd, buf, len) != len)
		die("writing %#" PRIx64 " to %s: %s", pfn, path, strerror(errno));
	close(fd);
}

static void corrupt_va(pid_t pid, uint64_t hva)
{
	char path[256], buf[64];
	int fd, len;

	snprintf(path, sizeof(path), "%s/hwpoison/corrupt-va", debugfs);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		die("cannot open %s: %s (the kernel needs patch 0002 for corrupt-va)", path,
		    strerror(errno));
	len = snprintf(buf, sizeof(buf), "%d %#" PRIx64 "\n", pid, hva);
	if (write(fd, buf, len) != len)
		die("writing '%d %#" PRIx64 "' to %s: %s", pid, hva, path, strerror(errno));
	close(fd);
}

static uint64_t poison(pid_t pid, const struct slot *s, unsigned int n, uint64_t gpa, int may_touch)
{
	uint64_t hva = gpa_to_hva(s, n, gpa, pid) & ~(PAGE - 1);
	uint64_t pfn = use_corrupt_va ? 0 : hva_to_pfn(pid, hva, gpa, may_touch);
	uint64_t t = now_ns();

	if (kill(pid, 0))
		die("pid %d is gone", pid);
	if (use_corrupt_va)
		corrupt_va(pid, hva);
	else
		corrupt_pfn(pfn);
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

static int soak(pid_t pid, const struct slot *s, unsigned int n, uint64_t first,
		unsigned int events, const char *log, int may_touch)
{
	uint64_t *lat = calloc(events, sizeof(*lat));
	unsigned int i, acked = 0, dup = 0, lost = 0;
	char needle[64];

	if (!lat)
		die("out of memory");
	for (i = 0; i < events; i++) {
		uint64_t gpa = soak_page(first, i, needle, sizeof(needle)), t0, deadline;

		t0 = poison(pid, s, n, gpa, may_touch);
		deadline = t0 + 10ULL * 1000000000ULL;
		while (!count_in_log(log, "\"event\":\"guest_retired\"", needle) &&
		       now_ns() < deadline)
			usleep(200);
		if (now_ns() >= deadline) {
			lost++;
			continue;
		}
		lat[acked++] = now_ns() - t0;
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

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "memmap", 1, 0, 'm' }, { "debugfs", 1, 0, 'd' }, { "touch", 0, 0, 't' },
		{ "soak", 1, 0, 's' }, { "log", 1, 0, 'l' }, { "corrupt-va", 0, 0, 'v' },
		{ "help", 0, 0, 'h' }, { 0, 0, 0, 0 },
	};
	const char *memmap = NULL, *log = NULL;
	char memmap_default[64], *end;
	unsigned int events = 0, n;
	struct slot slots[16];
	int may_touch = 0, c;
	uint64_t gpa;
	long pid;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			memmap = optarg;
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
			events = strtoul(optarg, &end, 0);
			if (*end || !events)
				die("--soak takes a positive count, not '%s'", optarg);
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
	pid = strtol(argv[optind], &end, 10);
	if (*end || pid <= 0)
		die("'%s' is not a pid", argv[optind]);
	errno = 0;
	gpa = strtoull(argv[optind + 1], &end, 0);
	if (*end || errno)
		die("'%s' is not a guest-physical address", argv[optind + 1]);
	if (kill(pid, 0) && errno == ESRCH)
		die("pid %ld: no such process", pid);
	if (!memmap) {
		snprintf(memmap_default, sizeof(memmap_default), HWLAB_MEMMAP_FMT, (int)pid);
		memmap = memmap_default;
	}
	n = read_memmap(memmap, pid, slots, 16);
	if (events)
		return soak(pid, slots, n, gpa, events, log, may_touch);
	poison(pid, slots, n, gpa, may_touch);
	return 0;
}
