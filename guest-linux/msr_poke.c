// SPDX-License-Identifier: GPL-2.0
/*
 * msr_poke: a guest's root reading and writing one MSR of one CPU through
 * the msr driver, /dev/cpu/CPU/msr (pread/pwrite of 8 bytes at the MSR's
 * number as the offset). The Linux guest's init runs it to misbehave on
 * purpose (hwlab_inner.smca_hostile=): a bogus deferred-error vector, a
 * masked or NMI extended LVT entry, a flood of SMCA register reads, each
 * an MSR exit the VMM must answer without stalling.
 *
 * Usage: msr_poke CPU read MSR
 *        msr_poke CPU write MSR VALUE
 *        msr_poke CPU flood MSR N      (N reads, as fast as they go)
 * Numbers in C notation (0x...). One line on stdout for what was done:
 *   msr_poke cpu=N op=read msr=0x... value=0x...
 *   msr_poke cpu=N op=write msr=0x... value=0x... readback=0x...
 *   msr_poke cpu=N op=flood msr=0x... reads=N failed=N ms=N value=0x...
 * Exit 0; 1 when the device or an access failed (said on stderr: a #GP
 * is EIO from the driver); 2 for a bad usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void usage(void)
{
	fprintf(stderr, "usage: msr_poke CPU read MSR | msr_poke CPU write MSR VALUE | "
		"msr_poke CPU flood MSR N\n");
	exit(2);
}

/* A whole number in C notation, all of the string; anything else is a usage error. */
static uint64_t number(const char *s, const char *what)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (!*s || *end || errno || *s == '-') {
		fprintf(stderr, "msr_poke: %s '%s' is not a number\n", what, s);
		usage();
	}
	return v;
}

static int msr_read(int fd, uint32_t msr, uint64_t *value)
{
	return pread(fd, value, sizeof(*value), msr) == sizeof(*value) ? 0 : -1;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
	char path[64];
	uint64_t cpu, value = 0, back = 0;
	uint32_t msr;
	int fd;

	if (argc < 4)
		usage();
	cpu = number(argv[1], "CPU");
	msr = (uint32_t)number(argv[3], "MSR");
	snprintf(path, sizeof(path), "/dev/cpu/%" PRIu64 "/msr", cpu);
	if (!strcmp(argv[2], "read") && argc == 4) {
		fd = open(path, O_RDONLY);
		if (fd < 0 || msr_read(fd, msr, &value)) {
			fprintf(stderr, "msr_poke: read %#x from %s: %s\n", msr, path, strerror(errno));
			return 1;
		}
		printf("msr_poke cpu=%" PRIu64 " op=read msr=%#x value=%#" PRIx64 "\n", cpu, msr, value);
	} else if (!strcmp(argv[2], "write") && argc == 5) {
		value = number(argv[4], "VALUE");
		fd = open(path, O_RDWR);
		if (fd < 0 || pwrite(fd, &value, sizeof(value), msr) != sizeof(value) ||
		    msr_read(fd, msr, &back)) {
			fprintf(stderr, "msr_poke: write %#" PRIx64 " to %#x of %s: %s\n", value, msr,
				path, strerror(errno));
			return 1;
		}
		printf("msr_poke cpu=%" PRIu64 " op=write msr=%#x value=%#" PRIx64 " readback=%#" PRIx64
		       "\n", cpu, msr, value, back);
	} else if (!strcmp(argv[2], "flood") && argc == 5) {
		uint64_t n = number(argv[4], "N"), i, failed = 0, t0;

		fd = open(path, O_RDONLY);
		if (fd < 0) {
			fprintf(stderr, "msr_poke: %s: %s\n", path, strerror(errno));
			return 1;
		}
		t0 = now_ms();
		for (i = 0; i < n; i++)
			failed += msr_read(fd, msr, &value) != 0;
		printf("msr_poke cpu=%" PRIu64 " op=flood msr=%#x reads=%" PRIu64 " failed=%" PRIu64
		       " ms=%" PRIu64 " value=%#" PRIx64 "\n", cpu, msr, n, failed, now_ms() - t0, value);
		if (failed)
			return 1;
	} else {
		usage();
	}
	return 0;
}
