/*
 * page_states: put a page into one state memory_failure() handles, poison
 * it and report what the process saw. Runs only inside the outer VM (the
 * page_states scenario): it poisons with madvise(MADV_HWPOISON) or, for
 * pages no process maps, with debugfs hwpoison/corrupt-pfn.
 *
 *   page_states CASE MODE
 *
 * MODE: late (no early kill: the access takes the SIGBUS), early
 * (PR_MCE_KILL_EARLY: BUS_MCEERR_AO at poison time), child (late; a forked
 * child with the default SIGBUS action touches the page), childearly (early,
 * inherited by a child with the default action, which does not touch it).
 *
 * It prints one line, for the scenario to assert on:
 *   PAGESTATE case=C mode=M pfn=0xN poison=0|errno sig=none|AO|AR|code<N>
 *     sigoff=0xN lsb=N data=ok|bad|na child=none|sigbus|exit<N>|sig<N>
 *     extra=... (what the case checks on top: fsync/read results)
 * sigoff is si_addr minus the start of the case's mapping; the page the
 * case poisons is at offset POISON_OFF (4 KiB mappings) or its tail page.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef MADV_HWPOISON
#define MADV_HWPOISON 100
#endif
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif
#ifndef BUS_MCEERR_AR
#define BUS_MCEERR_AR 4
#define BUS_MCEERR_AO 5
#endif

#define PG 4096UL
#define HUGE (2UL << 20)
#define NPAGES 8UL		/* 4 KiB cases: an 8-page mapping */
#define POISON_OFF (3 * PG)	/* the page they poison */
#define TOUCH 0x10		/* where in the page the access is */

static sigjmp_buf jb;
static volatile sig_atomic_t in_access, got_sig, got_code, got_lsb;
static void *volatile got_addr;
static char extra[256];

static void on_bus(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	got_sig = 1;
	got_code = si->si_code;
	got_addr = si->si_addr;
	got_lsb = si->si_addr_lsb;
	if (in_access)
		siglongjmp(jb, 1);
}

static void die(const char *what)
{
	printf("PAGESTATE-ERROR %s: %s\n", what, strerror(errno));
	exit(2);
}

static unsigned char pat(unsigned long off) { return (unsigned char)(off * 7 + 3 + (off >> 12)); }

static void fill(unsigned char *p, unsigned long len)
{
	for (unsigned long i = 0; i < len; i++)
		p[i] = pat(i);
}

/* every byte of [from, to) holds the pattern (zero if hole) */
static int intact(const unsigned char *p, unsigned long from, unsigned long to, int hole)
{
	for (unsigned long i = from; i < to; i++)
		if (p[i] != (hole ? 0 : pat(i)))
			return 0;
	return 1;
}

static int touch(volatile unsigned char *p);

/* intact(), touching each page first: -1 if one of them takes a SIGBUS */
static int safe_intact(unsigned char *p, unsigned long from, unsigned long to, int hole)
{
	for (unsigned long i = from; i < to; i += PG)
		if (touch(p + i))
			return -1;
	return intact(p, from, to, hole);
}

static unsigned long pfn_of(void *addr)
{
	uint64_t e = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0 || pread(fd, &e, 8, (uintptr_t)addr / PG * 8) != 8)
		die("pagemap");
	close(fd);
	if (!(e & (1ULL << 63)))
		return 0;
	return e & ((1ULL << 55) - 1);
}

static int swapped(void *addr)
{
	uint64_t e = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0 || pread(fd, &e, 8, (uintptr_t)addr / PG * 8) != 8)
		die("pagemap");
	close(fd);
	return !!(e & (1ULL << 62));
}

/* touch one byte; 1 if it faulted with SIGBUS */
static int touch(volatile unsigned char *p)
{
	in_access = 1;
	if (sigsetjmp(jb, 1)) {
		in_access = 0;
		return 1;
	}
	(void)*p;
	in_access = 0;
	return 0;
}

static int corrupt_pfn(unsigned long pfn)
{
	FILE *f = fopen("/sys/kernel/debug/hwpoison/corrupt-pfn", "w");

	if (!f)
		return errno;
	fprintf(f, "%#lx\n", pfn);
	return fclose(f) ? errno : 0;
}

/* the last pfn whose /proc/kpageflags has every bit of want */
static unsigned long find_pfn(uint64_t want)
{
	int fd = open("/proc/kpageflags", O_RDONLY);
	static uint64_t buf[4096];
	unsigned long pfn = 0, best = 0;
	ssize_t n;

	if (fd < 0)
		die("kpageflags");
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n / 8; i++, pfn++)
			if ((buf[i] & want) == want)
				best = pfn;
	}
	close(fd);
	return best;
}

#define KPF_SLAB 7
#define KPF_BUDDY 10
#define KPF_COMPOUND_HEAD 15
#define KPF_HUGE 17
#define KPF_RESERVED 32

static const char *sig_name(void)
{
	static char b[16];

	if (!got_sig)
		return "none";
	if (got_code == BUS_MCEERR_AO)
		return "AO";
	if (got_code == BUS_MCEERR_AR)
		return "AR";
	snprintf(b, sizeof(b), "code%d", (int)got_code);
	return b;
}

static void child_status(int st, char *out, size_t len)
{
	if (WIFSIGNALED(st))
		snprintf(out, len, WTERMSIG(st) == SIGBUS ? "sigbus" : "sig%d", WTERMSIG(st));
	else
		snprintf(out, len, "exit%d", WEXITSTATUS(st));
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "", *mode = argc > 2 ? argv[2] : "late";
	int early = !strcmp(mode, "early") || !strcmp(mode, "childearly");
	int with_child = !strncmp(mode, "child", 5);
	unsigned long len = NPAGES * PG, poff = POISON_OFF, pfn = 0;
	unsigned char *p = NULL;
	int poison = 0, fd = -1, hole = 0, huge = 0, lost_whole = 0, file_backed = 0;
	int clean = 0;		/* the kernel drops it: no signal, data re-read */
	const char *data = "na";
	char child[32] = "none";
	pid_t kid = -1;
	int go[2];
	struct sigaction sa = { .sa_sigaction = on_bus, .sa_flags = SA_SIGINFO };

	setvbuf(stdout, NULL, _IONBF, 0);
	sigaction(SIGBUS, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);	/* childearly: the child may be dead already */
	if (prctl(PR_MCE_KILL, PR_MCE_KILL_SET, early ? PR_MCE_KILL_EARLY : PR_MCE_KILL_LATE, 0, 0))
		die("prctl");

	/* --- pages no process maps: corrupt-pfn ------------------------- */
	if (!strcmp(c, "free_buddy") || !strcmp(c, "slab") || !strcmp(c, "reserved") ||
	    !strcmp(c, "free_huge")) {
		uint64_t want = !strcmp(c, "free_buddy") ? 1ULL << KPF_BUDDY :
				!strcmp(c, "slab") ? 1ULL << KPF_SLAB :
				!strcmp(c, "reserved") ? 1ULL << KPF_RESERVED :
				(1ULL << KPF_HUGE) | (1ULL << KPF_COMPOUND_HEAD);

		pfn = find_pfn(want);
		if (!pfn) {
			printf("PAGESTATE-ERROR no pfn with kpageflags %#llx\n", (unsigned long long)want);
			return 2;
		}
		poison = corrupt_pfn(pfn);
		printf("PAGESTATE case=%s mode=%s pfn=%#lx poison=%d sig=%s sigoff=0x0 lsb=0 data=na child=none extra=none\n",
		       c, mode, pfn, poison, sig_name());
		return 0;
	}

	/* --- the mapping ---------------------------------------------- */
	if (!strcmp(c, "dirty_anon") || !strcmp(c, "mlock_anon") || !strcmp(c, "swapcache")) {
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			die("mmap");
		if (!strcmp(c, "mlock_anon") && mlock(p, len))
			die("mlock");
		fill(p, len);
	} else if (!strncmp(c, "thp_", 4) || !strncmp(c, "huge_", 5)) {
		unsigned char *raw;

		huge = !strncmp(c, "huge_", 5);
		len = HUGE;
		poff = strstr(c, "tail") ? 5 * PG : 0;
		if (huge) {
			p = mmap(NULL, len, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
			if (p == MAP_FAILED)
				die("mmap hugetlb");
			lost_whole = 1;
		} else {
			raw = mmap(NULL, 2 * HUGE, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (raw == MAP_FAILED)
				die("mmap");
			p = (unsigned char *)(((uintptr_t)raw + HUGE - 1) & ~(HUGE - 1));
			if (madvise(p, HUGE, MADV_HUGEPAGE))
				die("MADV_HUGEPAGE");
		}
		fill(p, len);
		if (!huge) {
			/* a THP maps its 512 pages at consecutive pfns, the head 2 MiB aligned */
			unsigned long h = pfn_of(p);

			snprintf(extra, sizeof(extra), "thp=%d",
				 h && !(h & 511) && pfn_of(p + HUGE - PG) == h + 511);
		}
	} else if (!strcmp(c, "clean_file") || !strcmp(c, "dirty_file") || !strcmp(c, "file_hole") ||
		   !strcmp(c, "tmpfs")) {
		const char *path = !strcmp(c, "tmpfs") ? "/tmp/page_states.tmpfs" : "/mnt/page_states.file";
		int dirty = !strcmp(c, "dirty_file") || !strcmp(c, "tmpfs");

		hole = !strcmp(c, "file_hole");
		file_backed = 1;
		unlink(path);
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (fd < 0)
			die("open");
		if (hole) {
			if (ftruncate(fd, len))
				die("ftruncate");
		} else if (!dirty) {
			unsigned char *b = malloc(len);

			fill(b, len);
			if (write(fd, b, len) != (ssize_t)len || fsync(fd))
				die("write");
			free(b);
		} else if (ftruncate(fd, len)) {
			die("ftruncate");
		}
		p = mmap(NULL, len, dirty ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED)
			die("mmap file");
		if (dirty)
			fill(p, len);
		else
			for (unsigned long i = 0; i < len; i += PG)
				(void)*(volatile unsigned char *)(p + i);
		clean = !dirty;
	} else if (!strcmp(c, "sysv_shm")) {
		int id = shmget(IPC_PRIVATE, len, IPC_CREAT | 0600);

		if (id < 0)
			die("shmget");
		p = shmat(id, NULL, 0);
		if (p == (void *)-1)
			die("shmat");
		shmctl(id, IPC_RMID, NULL);
		fill(p, len);
	} else {
		printf("PAGESTATE-ERROR unknown case '%s'\n", c);
		return 2;
	}

	if (!strcmp(c, "swapcache")) {
		/* out to swap, then a child shares the swap entry (count 2, so
		 * the swap-in goes through the swap cache even on a synchronous
		 * device), then a read fault brings it back: clean, in swap cache */
		if (madvise(p + poff, PG, MADV_PAGEOUT))
			die("MADV_PAGEOUT");
		if (!swapped(p + poff)) {
			printf("PAGESTATE-ERROR MADV_PAGEOUT did not swap the page out\n");
			return 2;
		}
		with_child = 1;
		clean = 1;
	}

	if (with_child) {
		if (pipe(go))
			die("pipe");
		kid = fork();
		if (kid < 0)
			die("fork");
		if (kid == 0) {
			char b;

			signal(SIGBUS, SIG_DFL);
			if (read(go[0], &b, 1) != 1)
				_exit(3);
			if (b == 't')
				(void)*(volatile unsigned char *)(p + poff + TOUCH);
			/* a clean page comes back from disk/swap: same bytes */
			_exit(intact(p, 0, len, hole) ? 0 : 4);
		}
		close(go[0]);
	}
	if (!strcmp(c, "swapcache")) {
		(void)*(volatile unsigned char *)(p + poff);
		snprintf(extra, sizeof(extra), "swapped_in=%d", !swapped(p + poff));
	}

	pfn = pfn_of(p + poff);
	if (madvise(p + poff, PG, MADV_HWPOISON))
		poison = errno;

	/* early kill: the AO came on the way out of madvise() */
	if (kid > 0) {
		int st;
		char b = (!strcmp(mode, "childearly")) ? 'n' : 't';

		if (!strcmp(mode, "childearly")) {
			/* it dies of the AO, or is still waiting: then tell it not to touch */
			usleep(200000);
		}
		if (write(go[1], &b, 1) != 1 && errno != EPIPE)
			die("write pipe");
		waitpid(kid, &st, 0);
		child_status(st, child, sizeof(child));
	}

	if (!got_sig && !clean)
		touch(p + poff + TOUCH);

	/* what is left: the rest of the mapping (a hugetlb page is lost whole) */
	if (lost_whole) {
		data = "na";
	} else if (clean) {
		/* the kernel dropped the page: a new fault reads it from disk/swap */
		int r = safe_intact(p, 0, len, hole);

		data = r < 0 ? "sigbus" : r ? "ok" : "bad";
	} else {
		int a = safe_intact(p, 0, poff, 0), b = safe_intact(p, poff + PG, len, 0);

		data = a < 0 || b < 0 ? "sigbus" : a && b ? "ok" : "bad";
	}
	if (file_backed) {
		unsigned char b[PG];
		ssize_t r = pread(fd, b, sizeof(b), poff);
		int e = r < 0 ? errno : 0, ok = r == (ssize_t)sizeof(b);
		int fs = fsync(fd) ? errno : 0;

		/* the file's bytes at the poisoned page, by read() */
		for (unsigned long i = 0; ok && i < sizeof(b); i++)
			ok = b[i] == (hole ? 0 : pat(poff + i));
		snprintf(extra, sizeof(extra), "pread=%s fsync=%s",
			 r < 0 ? (e == EIO ? "EIO" : strerror(e)) : ok ? "ok" : "differs",
			 fs == EIO ? "EIO" : fs ? strerror(fs) : "ok");
	}
	printf("PAGESTATE case=%s mode=%s pfn=%#lx poison=%d sig=%s sigoff=0x%lx lsb=%d data=%s child=%s extra=%s\n",
	       c, mode, pfn, poison, sig_name(),
	       got_sig ? (unsigned long)((unsigned char *)got_addr - p) : 0UL, (int)got_lsb,
	       data, child, extra[0] ? extra : "none");
	return 0;
}
