// SPDX-License-Identifier: GPL-2.0
/*
 * Runs in the Linux guest: how fast the guest's kernel isolates a run of
 * poisoned pages, read from its own log records (/dev/kmsg), not from the
 * console. A lost 2 MiB is 512 "recovery action ...: Recovered" messages,
 * and the console prints them a line at a time over an emulated UART (two
 * port exits a byte under nested TCG, ~40 ms a line): counted there, the
 * console is measured, not memory_failure(). Each record's own time (the
 * kernel's printk clock, taken when it was logged) is what counts here.
 *
 *   kmsg_watch PAGES
 *
 * From the records logged after it starts, it counts the distinct pfns
 * that memory_failure() recovered in the PAGES-aligned block (PAGES a power
 * of two: 512, a 2 MiB page) of the first one it sees, and the
 * kernel's "MCE records pool full" warnings (a deferred error read from a
 * bank and then dropped: its page is never isolated). One line each time
 * the count reaches another quarter of PAGES, on the first pool-full
 * record, and when all PAGES are in: few, because each is a console line
 * that the guest prints itself, a byte an exit (measured: a line every 8
 * pages kept the guest busy ~150 ms a batch, longer than the batch took):
 *
 *   INNER-KMSG recovered=N of=PAGES pool_full=M first_us=T last_us=T lost=K
 *
 * lost: reads that found records overwritten before they were read (the
 * log buffer wrapped: a count short of PAGES may be short for that reason).
 * first_us and last_us: the printk times of the first and the latest
 * Recovered record counted (microseconds since the guest booted). The lines
 * go through /dev/kmsg at KERN_CRIT, so that a guest whose console shows
 * only its most urgent messages (loglevel=3: no memory_failure() lines)
 * still prints them, whole.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RECORD_MAX	8192	/* a /dev/kmsg read returns one record, at most this */

static int say(int kmsg, unsigned long n, unsigned long pages, unsigned long full,
	       unsigned long long first, unsigned long long last, unsigned long lost)
{
	char line[224];
	int len = snprintf(line, sizeof(line), "<2>INNER-KMSG recovered=%lu of=%lu pool_full=%lu "
			   "first_us=%llu last_us=%llu lost=%lu\n", n, pages, full, first, last,
			   lost);


	if (kmsg >= 0 && write(kmsg, line, len) == len)
		return 0;
	fputs(line + 3, stdout);
	return fflush(stdout);
}

int main(int argc, char **argv)
{
	static char rec[RECORD_MAX + 1];
	unsigned long long block = 0, first_us = 0, last_us = 0;
	unsigned long pages, n = 0, full = 0, step, next, lost = 0;
	unsigned char *seen;
	char *end;
	int fd, out;

	if (argc != 2) {
		fprintf(stderr, "usage: kmsg_watch PAGES\n");
		return 2;
	}
	errno = 0;
	pages = strtoul(argv[1], &end, 0);
	if (errno || *end || !pages || pages > (1ul << 20) || (pages & (pages - 1))) {
		fprintf(stderr, "kmsg_watch: PAGES '%s' is not a power of two up to %lu\n",
			argv[1], 1ul << 20);
		return 2;
	}
	seen = calloc(pages, 1);
	fd = open("/dev/kmsg", O_RDONLY);
	out = open("/dev/kmsg", O_WRONLY);
	if (!seen || fd < 0) {
		perror("kmsg_watch: /dev/kmsg");
		return 1;
	}
	/* only what is logged from now on: an earlier run's records are not this one's */
	if (lseek(fd, 0, SEEK_END) < 0) {
		perror("kmsg_watch: lseek(/dev/kmsg, SEEK_END)");
		return 1;
	}
	step = pages >= 4 ? pages / 4 : 1;
	next = step;
	while (n < pages) {
		ssize_t len = read(fd, rec, RECORD_MAX);
		unsigned long long ts, pfn;
		char *msg, *p;

		if (len < 0) {
			if (errno == EINTR)
				continue;
			/*
			 * Records overwritten before this read them: a count
			 * that stays short says why (lost=), at once
			 */
			if (errno == EPIPE) {
				if (!lost++)
					say(out, n, pages, full, first_us, last_us, lost);
				continue;
			}
			perror("kmsg_watch: read(/dev/kmsg)");
			return 1;
		}
		rec[len] = 0;
		/* "PRIO,SEQ,TS_US,FLAGS;MESSAGE\n" */
		msg = strchr(rec, ';');
		p = strchr(rec, ',');
		if (!msg || !p || sscanf(p + 1, "%*[0-9],%llu", &ts) != 1)
			continue;
		msg++;
		if (strstr(msg, "MCE records pool full")) {
			if (!full++)
				say(out, n, pages, full, first_us, last_us, lost);
			continue;
		}
		p = strstr(msg, "Memory failure: ");
		if (!p || !strstr(p, ": Recovered"))
			continue;
		pfn = strtoull(p + strlen("Memory failure: "), &end, 16);
		if (!n)
			block = pfn & ~(unsigned long long)(pages - 1);
		if (pfn < block || pfn - block >= pages || seen[pfn - block])
			continue;
		seen[pfn - block] = 1;
		if (!n++)
			first_us = ts;
		last_us = ts;
		if (n >= next || n == pages) {
			say(out, n, pages, full, first_us, last_us, lost);
			next = n + step;
		}
	}
	return 0;
}
