// SPDX-License-Identifier: GPL-2.0
/*
 * The Linux guest's workload: anonymous pages with a pattern, their
 * guest-physical addresses (so that the outer VM knows what to poison), and
 * a loop that keeps reading them, so that a poisoned page is consumed soon
 * (late kill) or reported before it is (early kill). It says what happened
 * in one line per event (see below for where it goes):
 *
 *   INNER-PAGE tag=T pid=P idx=I va=0x... pfn=0x... gpa=0x...
 *   INNER-READY tag=T pid=P pages=N mode=late|early
 *   INNER-SIGBUS tag=T pid=P code=BUS_MCEERR_AR|BUS_MCEERR_AO|N addr=0x... lsb=N idx=I
 *   INNER-CORRUPT tag=T pid=P idx=I
 *   INNER-ROUND tag=T pid=P n=K
 *
 * Each line is one kernel log record (INNER_LOG=kmsg, as the guest's init
 * sets it: one write(2) to /dev/kmsg at KERN_CRIT, which the console prints
 * whole, after its printk time), else a write to stdout (the console). A
 * line written to the console directly is cut by whatever the kernel prints
 * meanwhile from another vCPU ("INNER-SIGBUS tag[    6.041299] Memory
 * failure: ..."); printk never prints one record inside another.
 *
 * The SIGBUS handler writes its line with write(2) and hand-made numbers
 * only: nothing in it may take a lock the interrupted code holds.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define PAGE		4096UL
#define PM_PRESENT	(1ULL << 63)
#define PM_PFN_MASK	((1ULL << 55) - 1)

static const char *tag = "target";
static uint8_t *pages;
static unsigned long nr_pages = 8;
static int recover, thp;
static sigjmp_buf recover_point;
static volatile sig_atomic_t bad_idx = -1;

/* /dev/kmsg, open for writing when INNER_LOG=kmsg; else -1 (stdout) */
static int kmsg_fd = -1;

/*
 * Async-signal-safe line building. buf starts with the record's level
 * ("<2>": KERN_CRIT, printed at every console loglevel a test boots with,
 * loglevel=3 too), which only /dev/kmsg gets.
 */
#define LEVEL		"<2>"
#define LEVEL_LEN	(sizeof(LEVEL) - 1)

struct line {
	char buf[256];
	unsigned int len;
};

static void put_str(struct line *l, const char *s)
{
	while (*s && l->len < sizeof(l->buf) - 1)
		l->buf[l->len++] = *s++;
}

static void put_num(struct line *l, unsigned long long v, int hex)
{
	char tmp[24];
	int n = 0;

	if (hex)
		put_str(l, "0x");
	do {
		tmp[n++] = "0123456789abcdef"[v % (hex ? 16 : 10)];
		v /= hex ? 16 : 10;
	} while (v);
	while (n && l->len < sizeof(l->buf) - 1)
		l->buf[l->len++] = tmp[--n];
}

static void put_int(struct line *l, long long v)
{
	if (v < 0) {
		put_str(l, "-");
		v = -v;
	}
	put_num(l, v, 0);
}

static void start(struct line *l, const char *what)
{
	l->len = 0;
	put_str(l, LEVEL);
	put_str(l, what);
	put_str(l, " tag=");
	put_str(l, tag);
	put_str(l, " pid=");
	put_num(l, getpid(), 0);
}

static void emit(struct line *l)
{
	const char *p = l->buf + LEVEL_LEN;

	l->buf[l->len++] = '\n';
	/* one write, one record: /dev/kmsg takes all of it or nothing */
	if (kmsg_fd >= 0 && write(kmsg_fd, l->buf, l->len) == (ssize_t)l->len)
		return;
	l->len -= LEVEL_LEN;
	while (l->len) {
		ssize_t n = write(STDOUT_FILENO, p, l->len);

		if (n <= 0 && errno != EINTR)
			break;
		if (n > 0) {
			p += n;
			l->len -= n;
		}
	}
}

static uint8_t pattern(unsigned long idx, unsigned long off)
{
	return (uint8_t)(idx * 37 + off / 64 + 1);
}

static void fill(unsigned long idx)
{
	unsigned long off;

	for (off = 0; off < PAGE; off++)
		pages[idx * PAGE + off] = pattern(idx, off);
}

/* The page's frame from /proc/self/pagemap (root: the guest's init runs us). */
static void report_page(int pagemap, unsigned long idx)
{
	uintptr_t va = (uintptr_t)(pages + idx * PAGE);
	uint64_t e = 0;
	struct line l;

	if (pread(pagemap, &e, sizeof(e), va / PAGE * sizeof(e)) != sizeof(e) ||
	    !(e & PM_PRESENT) || !(e & PM_PFN_MASK)) {
		fprintf(stderr, "poison_target: no frame for page %lu in /proc/self/pagemap "
			"(entry %#llx; not root?)\n", idx, (unsigned long long)e);
		exit(1);
	}
	start(&l, "INNER-PAGE");
	put_str(&l, " idx=");
	put_num(&l, idx, 0);
	put_str(&l, " va=");
	put_num(&l, va, 1);
	put_str(&l, " pfn=");
	put_num(&l, e & PM_PFN_MASK, 1);
	put_str(&l, " gpa=");
	put_num(&l, (e & PM_PFN_MASK) * PAGE, 1);
	emit(&l);
}

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	uintptr_t a = (uintptr_t)si->si_addr, b = (uintptr_t)pages;
	long idx = a >= b && a < b + nr_pages * PAGE ? (long)((a - b) / PAGE) : -1;
	struct line l;

	(void)sig;
	(void)uc;
	start(&l, "INNER-SIGBUS");
	put_str(&l, " code=");
	if (si->si_code == BUS_MCEERR_AR)
		put_str(&l, "BUS_MCEERR_AR");
	else if (si->si_code == BUS_MCEERR_AO)
		put_str(&l, "BUS_MCEERR_AO");
	else
		put_int(&l, si->si_code);
	put_str(&l, " addr=");
	put_num(&l, a, 1);
	put_str(&l, " lsb=");
	put_num(&l, si->si_addr_lsb, 0);
	put_str(&l, " idx=");
	put_int(&l, idx);
	emit(&l);
	if (!recover || idx < 0)
		_exit(135);
	bad_idx = idx;
	siglongjmp(recover_point, 1);
}

/* recover: a fresh page where the poisoned one was, refilled and reported. */
static void replace_page(int pagemap, unsigned long idx)
{
	if (mmap(pages + idx * PAGE, PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED) {
		perror("poison_target: mmap over the poisoned page");
		exit(1);
	}
	fill(idx);
	report_page(pagemap, idx);
}

#define THP_SIZE	(2UL << 20)

/*
 * --thp: the pages in 2 MiB-aligned transparent huge pages, so that each
 * 2 MiB of guest-physical memory holds this process's pages and nothing
 * else (on hugetlb guest RAM: exactly one host huge page).
 */
static uint8_t *map_thp(void)
{
	size_t len = nr_pages * PAGE;
	uint8_t *p = mmap(NULL, len + THP_SIZE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *aligned;

	if (p == MAP_FAILED)
		return p;
	aligned = (uint8_t *)(((uintptr_t)p + THP_SIZE - 1) & ~(THP_SIZE - 1));
	if (madvise(aligned, len, MADV_HUGEPAGE)) {
		perror("poison_target: madvise(MADV_HUGEPAGE)");
		exit(1);
	}
	return aligned;
}

static void usage(void)
{
	fprintf(stderr, "usage: poison_target [--pages N] [--early] [--on-sigbus exit|recover] "
		"[--interval-ms MS] [--tag NAME] [--thp] [--rounds N]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pages", required_argument, NULL, 'p' }, { "early", no_argument, NULL, 'e' },
		{ "on-sigbus", required_argument, NULL, 's' },
		{ "interval-ms", required_argument, NULL, 'i' },
		{ "tag", required_argument, NULL, 't' }, { "thp", no_argument, NULL, 'h' },
		{ "rounds", required_argument, NULL, 'r' }, { 0 },
	};
	struct sigaction sa = { .sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO | SA_NODEFER };
	/* static: they live across the siglongjmp() back from the handler */
	static unsigned long interval_ms = 1, round, idx, rounds;
	static time_t last_round_line;
	static int pagemap;
	int early = 0, c;
	char *end;
	struct line l;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			nr_pages = strtoul(optarg, &end, 10);
			if (*end || !nr_pages || nr_pages > 65536)
				usage();
			break;
		case 'e':
			early = 1;
			break;
		case 's':
			if (strcmp(optarg, "exit") && strcmp(optarg, "recover"))
				usage();
			recover = !strcmp(optarg, "recover");
			break;
		case 'i':
			interval_ms = strtoul(optarg, &end, 10);
			/* up to an hour: an early kill with the guest's default
			 * poll (300 s) must not be overtaken by the target's own
			 * read of the page */
			if (*end || interval_ms > 3600000)
				usage();
			break;
		case 't':
			tag = optarg;
			break;
		case 'h':
			thp = 1;
			break;
		case 'r':
			/* N rounds over its pages, then exit 0: its pages go back free */
			rounds = strtoul(optarg, &end, 10);
			if (*end || !rounds)
				usage();
			break;
		default:
			usage();
		}
	}
	/* early: this process wants to hear of a bad page before it touches it */
	if (early && prctl(PR_MCE_KILL, PR_MCE_KILL_SET, PR_MCE_KILL_EARLY, 0, 0)) {
		perror("poison_target: prctl(PR_MCE_KILL)");
		return 1;
	}
	/* the guest's init says whether /dev/kmsg takes every line unthrottled */
	if (getenv("INNER_LOG") && !strcmp(getenv("INNER_LOG"), "kmsg")) {
		kmsg_fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
		if (kmsg_fd < 0)
			perror("poison_target: /dev/kmsg (its lines go to stdout)");
	}
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, NULL)) {
		perror("poison_target: sigaction");
		return 1;
	}
	pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (thp)
		pages = map_thp();
	else
		pages = mmap(NULL, nr_pages * PAGE, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pagemap < 0 || pages == MAP_FAILED) {
		perror("poison_target: /proc/self/pagemap or mmap");
		return 1;
	}
	for (idx = 0; idx < nr_pages; idx++) {
		fill(idx);
		report_page(pagemap, idx);
	}
	start(&l, "INNER-READY");
	put_str(&l, " pages=");
	put_num(&l, nr_pages, 0);
	put_str(&l, early ? " mode=early" : " mode=late");
	emit(&l);

	if (sigsetjmp(recover_point, 1) && bad_idx >= 0) {
		replace_page(pagemap, bad_idx);
		bad_idx = -1;
	}
	for (;; round++) {
		struct timespec ts = { interval_ms / 1000, interval_ms % 1000 * 1000000 };
		time_t now = time(NULL);

		for (idx = 0; idx < nr_pages; idx++) {
			unsigned long off;

			for (off = 0; off < PAGE; off += 64) {
				if (pages[idx * PAGE + off] == pattern(idx, off))
					continue;
				start(&l, "INNER-CORRUPT");
				put_str(&l, " idx=");
				put_num(&l, idx, 0);
				emit(&l);
				return 3;
			}
		}
		if (rounds && round + 1 >= rounds) {
			start(&l, "INNER-DONE");
			put_str(&l, " rounds=");
			put_num(&l, round + 1, 0);
			emit(&l);
			return 0;
		}
		if (now - last_round_line >= 2) {
			last_round_line = now;
			start(&l, "INNER-ROUND");
			put_str(&l, " n=");
			put_num(&l, round, 0);
			emit(&l);
		}
		if (interval_ms)
			nanosleep(&ts, NULL);
	}
}
