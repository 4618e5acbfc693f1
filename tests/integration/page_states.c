/*
 * page_states: put a page into one state memory_failure() handles, poison
 * it and report what the process saw. Runs only inside the outer VM (the
 * page_states and seed_paths scenarios): it poisons with
 * madvise(MADV_HWPOISON) or, for pages no process maps, with debugfs
 * hwpoison/corrupt-pfn; it soft-offlines with madvise(MADV_SOFT_OFFLINE) and
 * unpoisons with debugfs hwpoison/unpoison-pfn.
 *
 *   page_states CASE MODE
 *   page_states unpoison PFN
 *
 * MODE: late (no early kill: the access takes the SIGBUS), early
 * (PR_MCE_KILL_EARLY: BUS_MCEERR_AO at poison time), child (late; a forked
 * child with the default SIGBUS action touches the page), childearly (early,
 * inherited by a child with the default action, which does not touch it).
 * The cases that set the policy themselves (mce_thread, mce_clear) ignore it.
 *
 * It prints one line, for the scenario to assert on:
 *   PAGESTATE case=C mode=M pfn=0xN poison=0|errno|killed sig=none|AO|AR|code<N>
 *     sigoff=0xN lsb=N data=ok|bad|sigbus|na child=none|sigbus|exit<N>|sig<N>
 *     hwp=0|1 extra=... (what the case checks on top: fsync/read results)
 * sigoff is si_addr minus the start of the case's mapping; the page the
 * case poisons is at offset POISON_OFF (4 KiB mappings) or its tail page.
 * hwp is the KPF_HWPOISON bit of pfn in /proc/kpageflags right after the
 * poison call (0: not poisoned, as for a page a corrupt-filter-* rejects).
 * "unpoison PFN" prints
 *   UNPOISON pfn=0xN ret=0|EBUSY|... hwp_before=0|1 hwp_after=0|1
 *
 * The expected outcome of every case is in docs/kernel.md "Page states",
 * read from the 6.1 source (mm/memory-failure.c unless named).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef MADV_HWPOISON
#define MADV_HWPOISON 100
#endif
#ifndef MADV_SOFT_OFFLINE
#define MADV_SOFT_OFFLINE 101
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
#define DEBUGFS "/sys/kernel/debug/hwpoison/"

static sigjmp_buf jb;
static volatile sig_atomic_t in_access, got_sig, got_code, got_lsb, got_tid;
static void *volatile got_addr;
static int notify_fd = -1;	/* mce_thread: the handler writes a byte here */
static char extra[512];

static void on_bus(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	got_sig = 1;
	got_code = si->si_code;
	got_addr = si->si_addr;
	got_lsb = si->si_addr_lsb;
	got_tid = (sig_atomic_t)syscall(SYS_gettid);
	if (notify_fd >= 0) {
		ssize_t w = write(notify_fd, "s", 1);

		(void)w;
	}
	if (in_access)
		siglongjmp(jb, 1);
}

static void die(const char *what)
{
	printf("PAGESTATE-ERROR %s: %s\n", what, strerror(errno));
	exit(2);
}

/*
 * The outer kernel's time factor (outer-qemu/init exports
 * HWLAB_TIME_FACTOR, more than 1 on the debug kernel): a bound on a wait is
 * that many times longer.
 */
static int time_factor(void)
{
	const char *s = getenv("HWLAB_TIME_FACTOR");
	int f = s ? atoi(s) : 1;

	return f > 0 ? f : 1;
}

/* append to extra[], space-separated */
static void add_extra(const char *fmt, ...)
{
	size_t n = strlen(extra);
	va_list ap;

	if (n && n < sizeof(extra) - 1)
		extra[n++] = ' ';
	va_start(ap, fmt);
	vsnprintf(extra + n, sizeof(extra) - n, fmt, ap);
	va_end(ap);
}

static const char *errname(int e)
{
	static char b[16];

	switch (e) {
	case 0: return "0";
	case EBUSY: return "EBUSY";
	case EIO: return "EIO";
	case EINVAL: return "EINVAL";
	case EPERM: return "EPERM";
	case ENXIO: return "ENXIO";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EHWPOISON: return "EHWPOISON";
	}
	snprintf(b, sizeof(b), "errno%d", e);
	return b;
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

/* intact(), touching each page first: -1 if one of them takes a SIGBUS */
static int safe_intact(unsigned char *p, unsigned long from, unsigned long to, int hole)
{
	for (unsigned long i = from; i < to; i += PG)
		if (touch(p + i))
			return -1;
	return intact(p, from, to, hole);
}

static const char *data_word(int r) { return r < 0 ? "sigbus" : r ? "ok" : "bad"; }

/* the pagemap entry of addr in process pid (0: this one) */
static uint64_t pagemap(pid_t pid, const void *addr)
{
	char path[64];
	uint64_t e = 0;
	int fd;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/pagemap");
	fd = open(path, O_RDONLY);
	if (fd < 0 || pread(fd, &e, 8, (uintptr_t)addr / PG * 8) != 8)
		die("pagemap");
	close(fd);
	return e;
}

static unsigned long pfn_in(pid_t pid, const void *addr)
{
	uint64_t e = pagemap(pid, addr);

	return e & (1ULL << 63) ? e & ((1ULL << 55) - 1) : 0;
}

static unsigned long pfn_of(const void *addr) { return pfn_in(0, addr); }

/* A shared mapping of LEN bytes of a new hugetlbfs file at PATH; *fdp its fd. */
static unsigned char *map_hugefile(const char *path, unsigned long len, int *fdp)
{
	void *p;

	unlink(path);
	*fdp = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (*fdp < 0)
		die("open hugetlbfs");
	if (ftruncate(*fdp, len))
		die("ftruncate");
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, *fdp, 0);
	if (p == MAP_FAILED)
		die("mmap hugetlbfs");
	return p;
}


static int swapped(const void *addr) { return !!(pagemap(0, addr) & (1ULL << 62)); }

#define KPF_SLAB 7
#define KPF_BUDDY 10
#define KPF_ANON 12
#define KPF_SWAPCACHE 13
#define KPF_COMPOUND_HEAD 15
#define KPF_HUGE 17
#define KPF_UNEVICTABLE 18
#define KPF_HWPOISON 19
#define KPF_KSM 21
#define KPF_THP 22
#define KPF_ZERO_PAGE 24
#define KPF_RESERVED 32

/* /proc/kpageflags of pfn (0 past the last pfn) */
static uint64_t kpf(unsigned long pfn)
{
	uint64_t f = 0;
	int fd = open("/proc/kpageflags", O_RDONLY);

	if (fd < 0)
		die("kpageflags");
	/* past the last pfn: nothing to read, no flags */
	if (pread(fd, &f, 8, pfn * 8) != 8)
		f = 0;
	close(fd);
	return f;
}

static int kbit(unsigned long pfn, int bit) { return pfn ? !!(kpf(pfn) & (1ULL << bit)) : 0; }

/* write a number to a debugfs hwpoison file: 0 or the errno */
static int debugfs_write(const char *file, unsigned long val)
{
	char b[32];
	int n = snprintf(b, sizeof(b), "%#lx\n", val), e = 0;
	int fd = open(file, O_WRONLY);

	if (fd < 0)
		return errno;
	if (write(fd, b, n) != n)
		e = errno;
	close(fd);
	return e;
}

static int corrupt_pfn(unsigned long pfn) { return debugfs_write(DEBUGFS "corrupt-pfn", pfn); }
static int unpoison_pfn(unsigned long pfn) { return debugfs_write(DEBUGFS "unpoison-pfn", pfn); }

/*
 * Poison the page at addr: madvise(MADV_HWPOISON), or, with
 * HWLAB_PAGE_STATES_INJECT=corrupt-pfn, its pfn written to debugfs
 * hwpoison/corrupt-pfn. Since v6.11 madvise() passes MF_ACTION_REQUIRED and
 * signals its caller itself (an AR at the page, in either kill mode), so on
 * such a host the cases' signals would show the injector, not the page
 * state: there corrupt-pfn is memory_failure() as a patrol scrub calls it,
 * as madvise() was before. Returns 0 or the errno.
 */
static int poison_at(void *addr)
{
	const char *how = getenv("HWLAB_PAGE_STATES_INJECT");

	if (how && !strcmp(how, "corrupt-pfn"))
		return corrupt_pfn(pfn_of(addr));
	return madvise(addr, PG, MADV_HWPOISON) ? errno : 0;
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

/* a field of /proc/meminfo */
static long meminfo(const char *field)
{
	char line[256];
	long v = -1;
	size_t n = strlen(field);
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		die("meminfo");
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, n) && line[n] == ':')
			v = strtol(line + n + 1, NULL, 10);
	fclose(f);
	return v;
}

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

/* the PAGESTATE line; base: the mapping si_addr is reported against */
static void report(const char *c, const char *mode, unsigned long pfn, const char *poison,
		   const unsigned char *base, const char *data, const char *child, int hwp)
{
	printf("PAGESTATE case=%s mode=%s pfn=%#lx poison=%s sig=%s sigoff=0x%lx lsb=%d data=%s child=%s hwp=%d extra=%s\n",
	       c, mode, pfn, poison, sig_name(),
	       got_sig && base ? (unsigned long)((const unsigned char *)got_addr - base) : 0UL,
	       (int)got_lsb, data, child, hwp, extra[0] ? extra : "none");
}

static unsigned char *map_anon(unsigned long len)
{
	unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap");
	return p;
}

/* 2 MiB of anonymous memory at a 2 MiB boundary, MADV_HUGEPAGE */
static unsigned char *map_thp(void)
{
	unsigned char *raw = map_anon(2 * HUGE);
	unsigned char *p = (unsigned char *)(((uintptr_t)raw + HUGE - 1) & ~(HUGE - 1));

	if (madvise(p, HUGE, MADV_HUGEPAGE))
		die("MADV_HUGEPAGE");
	return p;
}

/* a THP maps its 512 pages at consecutive pfns, the head 2 MiB aligned */
static int is_thp(const unsigned char *p)
{
	unsigned long h = pfn_of(p);

	return h && !(h & 511) && pfn_of(p + HUGE - PG) == h + 511;
}

/*
 * The page at a, written before: out to swap, back into the swap cache and
 * mapped from it, exclusive. MADV_PAGEOUT writes it out and frees it (the
 * swap PTE keeps the exclusive marker: try_to_unmap_one(),
 * pte_swp_mkexclusive()); MADV_WILLNEED reads it into the swap cache
 * without mapping it (madvise_willneed() → swapin_walk_pmd_entry() →
 * read_swap_cache_async()), so the fault below finds it there even on brd,
 * whose swap-ins otherwise skip the swap cache (SWP_SYNCHRONOUS_IO); the
 * read fault maps it PageAnonExclusive and keeps the swap cache
 * (do_swap_page(), should_try_to_free_swap(): not a write fault). Then
 * dirty: a write goes through do_wp_page(), which reuses an exclusive page
 * as it is (PTE writable and dirty, page still in the swap cache).
 * Returns KPF_SWAPCACHE of the page at the end.
 */
static int into_swapcache(unsigned char *a, int dirty)
{
	if (madvise(a, PG, MADV_PAGEOUT))
		die("MADV_PAGEOUT");
	if (!swapped(a)) {
		printf("PAGESTATE-ERROR MADV_PAGEOUT did not swap the page out\n");
		exit(2);
	}
	if (madvise(a, PG, MADV_WILLNEED))
		die("MADV_WILLNEED");
	(void)*(volatile unsigned char *)a;
	if (dirty)
		*(volatile unsigned char *)(a + 1) = a[1];
	return kbit(pfn_of(a), KPF_SWAPCACHE);
}

/* ---- case mce_thread ---------------------------------------------------
 * find_early_kill_thread() walks the threads of a process and returns the
 * first with PF_MCE_PROCESS|PF_MCE_EARLY, or the first without
 * PF_MCE_PROCESS when vm.memory_failure_early_kill is 1. Here the main
 * thread never calls PR_MCE_KILL and a second thread sets EARLY: with the
 * sysctl 0 the AO goes to that thread (kill_proc(): send_sig_mceerr() to
 * the task found), with 1 to the main thread, the first one walked.
 */
static int quit_pipe[2], ready_pipe[2];
static volatile pid_t t2_tid;

static void *early_thread(void *arg)
{
	char b;

	(void)arg;
	t2_tid = (pid_t)syscall(SYS_gettid);
	if (prctl(PR_MCE_KILL, PR_MCE_KILL_SET, PR_MCE_KILL_EARLY, 0, 0))
		die("prctl in thread");
	if (write(ready_pipe[1], "r", 1) != 1)
		die("write ready");
	/* a signal handled here interrupts read(): wait for the quit byte */
	while (read(quit_pipe[0], &b, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

static int mce_thread(const char *c, const char *mode)
{
	unsigned long len = NPAGES * PG, pfn;
	unsigned char *p = map_anon(len);
	pid_t main_tid = (pid_t)syscall(SYS_gettid);
	int notify[2], poison = 0, sysctl = -1, a, b;
	struct pollfd pfd;
	pthread_t t;
	FILE *f;
	char b0;

	f = fopen("/proc/sys/vm/memory_failure_early_kill", "r");
	if (!f || fscanf(f, "%d", &sysctl) != 1)
		die("memory_failure_early_kill");
	fclose(f);
	fill(p, len);
	if (pipe(notify) || pipe(quit_pipe) || pipe(ready_pipe))
		die("pipe");
	notify_fd = notify[1];
	if (pthread_create(&t, NULL, early_thread, NULL))
		die("pthread_create");
	if (read(ready_pipe[0], &b0, 1) != 1)
		die("read ready");
	pfn = pfn_of(p + POISON_OFF);
	poison = poison_at(p + POISON_OFF);
	/* the AO is queued before madvise() returns; wait for its handler, in
	 * whichever thread runs it (bounded: no signal at all is a failure) */
	pfd = (struct pollfd){ .fd = notify[0], .events = POLLIN };
	poll(&pfd, 1, 30000);
	if (write(quit_pipe[1], "q", 1) != 1)
		die("write quit");
	pthread_join(t, NULL);
	a = safe_intact(p, 0, POISON_OFF, 0);
	b = safe_intact(p, POISON_OFF + PG, len, 0);
	add_extra("sigto=%s sysctl=%d", !got_sig ? "none" : got_tid == main_tid ? "main" :
		  got_tid == t2_tid ? "thread" : "other", sysctl);
	report(c, mode, pfn, errname(poison), p, data_word(a < 0 || b < 0 ? -1 : a && b),
	       "none", kbit(pfn, KPF_HWPOISON));
	return 0;
}

/* ---- case mce_clear ----------------------------------------------------
 * PR_MCE_KILL_GET before and after each PR_MCE_KILL (kernel/sys.c):
 * DEFAULT (2) without PF_MCE_PROCESS, else EARLY (1) or LATE (0) by
 * PF_MCE_EARLY. PR_MCE_KILL_SET sets PF_MCE_PROCESS before it checks its
 * argument, so an invalid policy returns EINVAL and still leaves the
 * process with its own policy (LATE here, PF_MCE_EARLY being clear).
 * PR_MCE_KILL_CLEAR clears PF_MCE_PROCESS only: PF_MCE_EARLY stays set, but
 * find_early_kill_thread() looks at it only with PF_MCE_PROCESS, so the
 * process follows vm.memory_failure_early_kill again.
 */
static const char *mce_get(int arg2)
{
	int r = prctl(PR_MCE_KILL_GET, arg2, 0, 0, 0);

	return r == PR_MCE_KILL_EARLY ? "early" : r == PR_MCE_KILL_LATE ? "late" :
	       r == PR_MCE_KILL_DEFAULT ? "default" : r < 0 ? errname(errno) : "?";
}

static const char *mce_set(int arg2, int arg3)
{
	if (prctl(PR_MCE_KILL, arg2, arg3, 0, 0))
		return errname(errno);
	return mce_get(0);
}

static void mce_clear_sequence(void)
{
	add_extra("get=%s", mce_get(0));
	add_extra("set_early=%s", mce_set(PR_MCE_KILL_SET, PR_MCE_KILL_EARLY));
	add_extra("set_late=%s", mce_set(PR_MCE_KILL_SET, PR_MCE_KILL_LATE));
	add_extra("set_default=%s", mce_set(PR_MCE_KILL_SET, PR_MCE_KILL_DEFAULT));
	add_extra("bad_set=%s", mce_set(PR_MCE_KILL_SET, 7));
	add_extra("after_bad=%s", mce_get(0));
	add_extra("bad_clear=%s", mce_set(PR_MCE_KILL_CLEAR, 1));
	add_extra("bad_get=%s", mce_get(1));
	mce_set(PR_MCE_KILL_SET, PR_MCE_KILL_EARLY);
	add_extra("cleared=%s", mce_set(PR_MCE_KILL_CLEAR, 0));
}

/* ---- case unmap_fail ----------------------------------------------------
 * kill_procs() with fail=true: hwpoison_user_mappings() could not unmap the
 * page, so every early-kill process it collected gets SIGKILL ("forcibly
 * killing ... because of failure to unmap corrupted page") instead of a
 * SIGBUS it could catch, and memory_failure() reports "unmapping failed
 * page: Ignored". With TTU_HWPOISON try_to_unmap_one() always replaces the
 * PTE with a hwpoison entry; it can fail only where that flag is cleared:
 * for a page in the swap cache ("keeping poisoned page in swap cache"),
 * whose PTE goes back to a swap entry. For an exclusive anonymous page
 * that needs page_try_share_anon_rmap(), which refuses (-EBUSY) when the
 * page may be pinned for DMA; for a small page page_maybe_dma_pinned() is
 * "refcount >= GUP_PIN_COUNTING_BIAS (1024)". A real pin (O_DIRECT in
 * flight, RDMA, vfio, io_uring fixed buffers) gets there with one
 * pin_user_pages(); here plain references do, as the heuristic's
 * documented false positive: vmsplice() puts the page into pipe buffers,
 * each holding a reference (iter_to_pipe()), 1280 of them. The PTE is
 * restored, the page stays mapped (page_mapped(): "failed to unmap page").
 * The process does it in a forked child, which the SIGKILL ends; the
 * parent reports. Late (not collected by collect_procs()): no signal at
 * all, madvise() returns EBUSY and the page stays mapped.
 */
static int pin_by_vmsplice(unsigned char *a)
{
	static struct iovec iov[256];
	int bufs = 0;

	for (int i = 0; i < 256; i++)
		iov[i] = (struct iovec){ .iov_base = a, .iov_len = PG };
	while (bufs < 1280) {
		int fds[2];
		ssize_t n;

		if (pipe(fds))
			die("pipe");
		/* 256 slots a pipe (1 MiB, pipe-max-size), else the default 16 */
		fcntl(fds[1], F_SETPIPE_SZ, 256 * PG);
		n = vmsplice(fds[1], iov, 256, SPLICE_F_NONBLOCK);
		if (n <= 0)
			die("vmsplice");
		bufs += n / PG;
	}
	return bufs;
}

static int unmap_fail(const char *c, const char *mode)
{
	int info[2], st, early = !strcmp(mode, "early");
	char buf[512] = "", child[32], pfn_s[32] = "0x0", rest[256] = "";
	unsigned long pfn = 0;
	ssize_t n, got = 0;
	pid_t kid;

	if (pipe(info))
		die("pipe");
	kid = fork();
	if (kid < 0)
		die("fork");
	if (kid == 0) {
		unsigned long len = NPAGES * PG;
		unsigned char *p = map_anon(len);
		int sc, bufs, poison = 0, a, b;
		FILE *out;

		close(info[0]);
		out = fdopen(info[1], "w");
		setvbuf(out, NULL, _IONBF, 0);
		if (prctl(PR_MCE_KILL, PR_MCE_KILL_SET, early ? PR_MCE_KILL_EARLY : PR_MCE_KILL_LATE, 0, 0))
			die("prctl");
		fill(p, len);
		sc = into_swapcache(p + POISON_OFF, 0);
		bufs = pin_by_vmsplice(p + POISON_OFF);
		fprintf(out, "%#lx swapcache=%d refs=%d\n", pfn_of(p + POISON_OFF), sc, bufs);
		poison = poison_at(p + POISON_OFF);
		/* alive: no SIGKILL */
		a = safe_intact(p, 0, len, 0);
		b = got_sig;
		fprintf(out, "poison=%s sig=%s sigoff=0x%lx lsb=%d data=%s\n", errname(poison), sig_name(),
			b ? (unsigned long)((unsigned char *)got_addr - p) : 0UL, (int)got_lsb,
			data_word(a));
		_exit(0);
	}
	close(info[1]);
	while ((n = read(info[0], buf + got, sizeof(buf) - 1 - got)) > 0)
		got += n;
	buf[got] = '\0';
	waitpid(kid, &st, 0);
	child_status(st, child, sizeof(child));
	/* line 1: "PFN swapcache=N refs=N"; line 2 (if it lived): the rest */
	if (sscanf(buf, "%31s %255[^\n]", pfn_s, extra) < 1)
		printf("PAGESTATE-ERROR the child reported nothing: %s\n", buf);
	pfn = strtoul(pfn_s, NULL, 0);
	if (strchr(buf, '\n') && sscanf(strchr(buf, '\n') + 1, "%255[^\n]", rest) == 1)
		printf("PAGESTATE case=%s mode=%s pfn=%#lx %s child=%s hwp=%d extra=%s\n",
		       c, mode, pfn, rest, child, kbit(pfn, KPF_HWPOISON), extra);
	else
		printf("PAGESTATE case=%s mode=%s pfn=%#lx poison=killed sig=none sigoff=0x0 lsb=0 data=na child=%s hwp=%d extra=%s\n",
		       c, mode, pfn, child, kbit(pfn, KPF_HWPOISON), extra);
	return 0;
}

/* ---- case ksm -----------------------------------------------------------
 * A page KSM merged between this process and a child (the same 8 pages,
 * written by each after fork() into a MADV_MERGEABLE mapping), poisoned by
 * the parent. hwpoison_user_mappings() refuses KSM pages before it collects
 * or unmaps anything ("can't handle KSM pages."), so memory_failure()
 * reports "unmapping failed page: Ignored" and madvise() EBUSY; neither
 * mapper gets a signal, early or late, both keep it mapped and read it
 * (software poison: the bytes are intact). The scenario runs ksmd.
 */
static int ksm_case(const char *c, const char *mode)
{
	unsigned long len = NPAGES * PG, pfn = 0, kpfn = 0;
	unsigned char *p = map_anon(len);
	int go[2], filled[2], st, poison = 0, merged = 0, polls, r;
	char child[32], b;
	pid_t kid;

	if (madvise(p, len, MADV_MERGEABLE))
		die("MADV_MERGEABLE");
	if (pipe(go) || pipe(filled))
		die("pipe");
	kid = fork();
	if (kid < 0)
		die("fork");
	if (kid == 0) {
		signal(SIGBUS, SIG_DFL);
		fill(p, len);
		if (write(filled[1], "f", 1) != 1 || read(go[0], &b, 1) != 1)
			_exit(3);
		_exit(intact(p, 0, len, 0) ? 0 : 4);
	}
	fill(p, len);
	if (read(filled[0], &b, 1) != 1)
		die("read filled");
	/* until ksmd has merged the page: one pfn in both, KPF_KSM (bounded) */
	for (polls = 0; polls < 6000 * time_factor(); polls++) {
		pfn = pfn_of(p + POISON_OFF);
		kpfn = pfn_in(kid, p + POISON_OFF);
		if (pfn && pfn == kpfn && kbit(pfn, KPF_KSM)) {
			merged = 1;
			break;
		}
		usleep(20000);
	}
	add_extra("ksm=%d polls=%d", merged, polls);
	poison = poison_at(p + POISON_OFF);
	if (write(go[1], "g", 1) != 1)
		die("write go");
	waitpid(kid, &st, 0);
	child_status(st, child, sizeof(child));
	r = safe_intact(p, 0, len, 0);
	report(c, mode, pfn, errname(poison), p, data_word(r), child, kbit(pfn, KPF_HWPOISON));
	return 0;
}

/* ---- cases soft_anon, soft_thp, soft_huge ------------------------------
 * madvise(MADV_SOFT_OFFLINE) → soft_offline_page(pfn, MF_COUNT_INCREASED):
 * soft_offline_in_use_page() splits a THP first, isolates the page and
 * migrates it (migrate_pages(), MR_MEMORY_FAILURE), then
 * page_handle_poison() marks the old page PG_hwpoison, takes it (for
 * hugetlb: dissolves the old huge page and takes the raw page) off the
 * buddy allocator, and counts it in num_poisoned_pages (HardwareCorrupted).
 * No action_result(): no "Memory failure:" line, no memory_failure/ or
 * hwpoison/stats count; no signal. The process keeps its data at a new pfn.
 */
static int soft_case(const char *c, const char *mode)
{
	int huge = !strcmp(c, "soft_huge"), thp = !strcmp(c, "soft_thp");
	unsigned long len = huge || thp ? HUGE : NPAGES * PG, poff = huge || thp ? 5 * PG : POISON_OFF;
	unsigned long old, new;
	unsigned char *p;
	int r, e = 0;

	if (huge) {
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
		if (p == MAP_FAILED)
			die("mmap hugetlb");
	} else {
		p = thp ? map_thp() : map_anon(len);
	}
	fill(p, len);
	if (thp)
		add_extra("thp=%d", is_thp(p));
	old = pfn_of(p + poff);
	if (madvise(p + poff, PG, MADV_SOFT_OFFLINE))
		e = errno;
	new = pfn_of(p + poff);
	add_extra("moved=%d oldhwp=%d newhwp=%d", new && new != old, kbit(old, KPF_HWPOISON),
		  kbit(new, KPF_HWPOISON));
	r = safe_intact(p, 0, len, 0);
	report(c, mode, old, errname(e), p, data_word(r), "none", kbit(old, KPF_HWPOISON));
	return 0;
}

/* ---- unpoison ----------------------------------------------------------
 * unpoison_memory(): -EIO for a pfn that is not online memory; "Unpoison:
 * huge zero page is not supported" (-EOPNOTSUPP), before anything else;
 * "Unpoison: Page was already unpoisoned" (-EBUSY) without PG_hwpoison;
 * "Unpoison: Someone grabs the hwpoison page" (-EBUSY) while someone else
 * holds a reference; -EBUSY without a message for slab, page-table and
 * reserved pages; otherwise "Unpoison: Software-unpoisoned page" and
 * num_poisoned_pages goes down (a free buddy page taken off goes back with
 * put_page_back_buddy(); a hugetlb page is freed to the pool).
 */
static int unpoison_cmd(const char *arg)
{
	char *end;
	unsigned long pfn = strtoul(arg, &end, 0);
	int before, e;

	if (!*arg || *end) {
		printf("PAGESTATE-ERROR unpoison: bad pfn '%s'\n", arg);
		return 2;
	}
	before = kbit(pfn, KPF_HWPOISON);
	e = unpoison_pfn(pfn);
	printf("UNPOISON pfn=%#lx ret=%s hwp_before=%d hwp_after=%d\n", pfn, errname(e), before,
	       kbit(pfn, KPF_HWPOISON));
	return 0;
}

/* unpoison_clean: a page of ours never poisoned; unpoison_hzp: the huge
 * zero page (a read fault on untouched MADV_HUGEPAGE memory maps it) */
static int unpoison_refused(const char *c, const char *mode)
{
	unsigned char *p;
	unsigned long pfn;
	int e;

	if (!strcmp(c, "unpoison_hzp")) {
		p = map_thp();
		(void)*(volatile unsigned char *)p;
		pfn = pfn_of(p);
		add_extra("hzp=%d", kbit(pfn, KPF_ZERO_PAGE) && kbit(pfn, KPF_THP));
	} else {
		p = map_anon(PG);
		fill(p, PG);
		pfn = pfn_of(p);
	}
	e = unpoison_pfn(pfn);
	add_extra("unpoison=%s", errname(e));
	report(c, mode, pfn, "0", p, "na", "none", kbit(pfn, KPF_HWPOISON));
	return 0;
}

/*
 * unpoison_hugefile: a hugetlbfs page, shared, poisoned (me_huge_page():
 * truncate_error_page() keeps it in the page cache), unpoisoned twice:
 * while the page cache and memory_failure() hold references ("Someone
 * grabs", EBUSY), and after munmap() and ftruncate() removed it from the
 * file (hugetlb_delete_from_page_cache()), when only memory_failure()'s
 * reference is left: __get_unpoison_page() → get_hwpoison_huge_page()
 * takes one more, free_raw_hwp_pages() drops the raw page list, both
 * references go and free_huge_page() puts it back in the pool.
 */
static int unpoison_hugefile(const char *c, const char *mode)
{
	const char *path = "/hugetlbfs/page_states.unpoison";
	unsigned char *p;
	unsigned long pfn;
	long free0, free1;
	int fd, poison = 0, e;

	p = map_hugefile(path, HUGE, &fd);
	fill(p, HUGE);
	pfn = pfn_of(p);
	poison = poison_at(p);
	e = unpoison_pfn(pfn);
	add_extra("busy=%s", errname(e));
	munmap(p, HUGE);
	if (ftruncate(fd, 0))
		die("ftruncate 0");
	free0 = meminfo("HugePages_Free");
	e = unpoison_pfn(pfn);
	free1 = meminfo("HugePages_Free");
	add_extra("unpoison=%s hwp_after=%d pool=%+ld", errname(e), kbit(pfn, KPF_HWPOISON), free1 - free0);
	report(c, mode, pfn, errname(poison), NULL, "na", "none", 1);
	close(fd);
	unlink(path);
	return 0;
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "", *mode = argc > 2 ? argv[2] : "late";
	int early = !strcmp(mode, "early") || !strcmp(mode, "childearly");
	int with_child = !strncmp(mode, "child", 5);
	unsigned long len = NPAGES * PG, poff = POISON_OFF, pfn = 0;
	unsigned char *p = NULL;
	int poison = 0, fd = -1, hole = 0, lost_whole = 0, file_backed = 0, hwp;
	int clean = 0;		/* the kernel drops it: no signal, data re-read */
	const char *data = "na", *hugefile = NULL;
	char child[32] = "none";
	pid_t kid = -1;
	int go[2];
	struct sigaction sa = { .sa_sigaction = on_bus, .sa_flags = SA_SIGINFO };

	setvbuf(stdout, NULL, _IONBF, 0);
	sigaction(SIGBUS, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);	/* childearly: the child may be dead already */

	if (!strcmp(c, "unpoison"))
		return unpoison_cmd(mode);
	/* the cases that choose the policy themselves */
	if (!strcmp(c, "mce_thread"))
		return mce_thread(c, mode);
	if (!strcmp(c, "mce_clear"))
		mce_clear_sequence();
	else if (prctl(PR_MCE_KILL, PR_MCE_KILL_SET, early ? PR_MCE_KILL_EARLY : PR_MCE_KILL_LATE, 0, 0))
		die("prctl");
	if (!strcmp(c, "unmap_fail"))
		return unmap_fail(c, mode);
	if (!strcmp(c, "ksm"))
		return ksm_case(c, mode);
	if (!strncmp(c, "soft_", 5))
		return soft_case(c, mode);
	if (!strcmp(c, "unpoison_clean") || !strcmp(c, "unpoison_hzp"))
		return unpoison_refused(c, mode);
	if (!strcmp(c, "unpoison_hugefile"))
		return unpoison_hugefile(c, mode);

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
		report(c, mode, pfn, errname(poison), NULL, "na", "none", kbit(pfn, KPF_HWPOISON));
		return 0;
	}

	/* --- the mapping ---------------------------------------------- */
	if (!strcmp(c, "dirty_anon") || !strcmp(c, "mlock_anon") || !strcmp(c, "swapcache") ||
	    !strcmp(c, "dirty_swapcache") || !strcmp(c, "mce_clear")) {
		p = map_anon(len);
		if (!strcmp(c, "mlock_anon") && mlock(p, len))
			die("mlock");
		fill(p, len);
	} else if (!strncmp(c, "thp_", 4) || !strncmp(c, "huge_", 5) || !strncmp(c, "hugefile_", 9)) {
		int huge = strncmp(c, "thp_", 4);

		len = HUGE;
		poff = strstr(c, "tail") ? 5 * PG : 0;
		if (!strncmp(c, "hugefile_", 9)) {
			/* a shared mapping of a hugetlbfs file (the scenario mounts it) */
			static char path[128];

			snprintf(path, sizeof(path), "/hugetlbfs/page_states.%s.%s", c, mode);
			hugefile = path;
			p = map_hugefile(path, len, &fd);
		} else if (huge) {
			p = mmap(NULL, len, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
		} else {
			p = map_thp();
		}
		if (p == MAP_FAILED)
			die("mmap hugetlb");
		lost_whole = huge;
		fill(p, len);
		if (!huge)
			add_extra("thp=%d", is_thp(p));
	} else if (!strcmp(c, "clean_file") || !strcmp(c, "dirty_file") || !strcmp(c, "file_hole") ||
		   !strcmp(c, "tmpfs") || !strcmp(c, "ramfs") || !strcmp(c, "ramfs_clean")) {
		/* ramfs (the scenario mounts it): its pages are unevictable
		 * (ramfs_get_inode(): mapping_set_unevictable()) */
		const char *path = !strcmp(c, "tmpfs") ? "/tmp/page_states.tmpfs" :
				   !strncmp(c, "ramfs", 5) ? "/ramfs/page_states.ramfs" :
				   "/mnt/page_states.file";
		int dirty = !strcmp(c, "dirty_file") || !strcmp(c, "tmpfs") || !strcmp(c, "ramfs");

		hole = !strcmp(c, "file_hole") || !strcmp(c, "ramfs_clean");
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
		/*
		 * A clean page is dropped and read again only where it can be
		 * written back: hwpoison_user_mappings() clears TTU_HWPOISON
		 * for it only if mapping_can_writeback(). ramfs cannot (its
		 * backing_dev_info is noop_backing_dev_info), so its clean page
		 * gets a hwpoison entry like a dirty one, and no kill
		 * (forcekill: not dirty): the next access takes an AR.
		 */
		clean = !dirty && strcmp(c, "ramfs_clean");
	} else if (!strcmp(c, "sysv_shm") || !strcmp(c, "shm_locked")) {
		int id = shmget(IPC_PRIVATE, len, IPC_CREAT | 0600);

		if (id < 0)
			die("shmget");
		/* SHM_LOCK: shmem_lock() → mapping_set_unevictable(), so the
		 * pages faulted in below go to the unevictable LRU */
		if (!strcmp(c, "shm_locked")) {
			if (shmctl(id, SHM_LOCK, NULL))
				die("SHM_LOCK");
			add_extra("locked=1");
		}
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
	if (!strcmp(c, "dirty_swapcache"))
		add_extra("swapcache=%d", into_swapcache(p + poff, 1));

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
		add_extra("swapped_in=%d", !swapped(p + poff));
	}

	pfn = pfn_of(p + poff);
	poison = poison_at(p + poff);
	hwp = kbit(pfn, KPF_HWPOISON);

	/* early kill: the AO came on the way out of madvise() */
	if (kid > 0) {
		int st;
		char b = (!strcmp(mode, "childearly")) ? 'n' : 't';

		/*
		 * childearly: kill_procs() queued the AO to the child before
		 * madvise() returned, and a fatal signal (SIGBUS, default
		 * action) ends the child before it runs user code again; so
		 * 'n' reaches it only if no AO was sent, and no wait is needed
		 */
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
		data = data_word(safe_intact(p, 0, len, hole));
	} else {
		int a = safe_intact(p, 0, poff, hole), b = safe_intact(p, poff + PG, len, hole);

		data = data_word(a < 0 || b < 0 ? -1 : a && b);
	}
	if (file_backed) {
		unsigned char b[PG];
		ssize_t r = pread(fd, b, sizeof(b), poff);
		int e = r < 0 ? errno : 0, ok = r == (ssize_t)sizeof(b);
		int fs = fsync(fd) ? errno : 0;

		/* the file's bytes at the poisoned page, by read() */
		for (unsigned long i = 0; ok && i < sizeof(b); i++)
			ok = b[i] == (hole ? 0 : pat(poff + i));
		add_extra("pread=%s fsync=%s",
			  r < 0 ? (e == EIO ? "EIO" : strerror(e)) : ok ? "ok" : "differs",
			  fs == EIO ? "EIO" : fs ? strerror(fs) : "ok");
	}
	if (hugefile) {
		/*
		 * The poisoned huge page stays in the file's page cache
		 * (me_huge_page(): hugetlbfs_error_remove_page() keeps it), so
		 * a new mapping of the file faults on it: hugetlb_no_page()
		 * finds PG_hwpoison → VM_FAULT_HWPOISON_LARGE → SIGBUS AR with
		 * lsb 21. The signal fields of the report stay the first ones.
		 */
		sig_atomic_t s = got_sig, code = got_code, lsb = got_lsb;
		void *addr = got_addr;
		char rsig[16];
		unsigned char *q;
		int r;

		munmap(p, len);
		q = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
		if (q == MAP_FAILED)
			die("mmap hugetlbfs again");
		got_sig = 0;
		r = touch(q + poff + TOUCH);
		snprintf(rsig, sizeof(rsig), "%s", sig_name());
		add_extra("remap=%s remap_sig=%s remap_lsb=%d", r ? "sigbus" : "ok", rsig, (int)got_lsb);
		got_sig = s;
		got_code = code;
		got_lsb = lsb;
		got_addr = addr;
	}
	report(c, mode, pfn, errname(poison), p, data, child, hwp);
	return 0;
}
