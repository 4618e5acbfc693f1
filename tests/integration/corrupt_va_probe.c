// SPDX-License-Identifier: GPL-2.0
/*
 * Runs inside the outer VM, for the corrupt_va scenario (kernel patch 0002):
 * what debugfs hwpoison/corrupt-va must refuse, each checked with the
 * errno of the write and with HardwareCorrupted in /proc/meminfo, which any
 * page poisoned by mistake would raise; and what it must poison, each
 * checked with the kernel's recovery line, HardwareCorrupted (+4 kB) and
 * what the process sees then (SIGBUS, or its data).
 *
 *   corrupt_va_probe            the self-checks below, on pages of its own:
 *                               refused: the huge zero page, untouched
 *                               memory, malformed input, no ptrace access
 *                               (EPERM), a page poisoned twice, a kvm_run
 *                               page (not LRU: EBUSY), a swapped-out page,
 *                               file pages not mapped; poisoned: hugetlb
 *                               (private, shared), a THP subpage, ext2
 *                               (clean, dirty), shmem; the device filter.
 *                               Needs ext2 on /mnt, swap, 2 free huge pages.
 *   corrupt_va_probe vdso       [vvar] and [vdso] refused, then new processes
 *                               must run; reboots the VM when they do not
 *                               (the vDSO poisoned): run it last
 *   corrupt_va_probe write STR  write STR to corrupt-va once and print
 *                               "corrupt-va 'STR': ok" or "...: errno NAME";
 *                               exit 0 on success, 1 otherwise
 *   corrupt_va_probe true       exit 0 (a new process, for the vdso check)
 *
 * The self-checks print "HWLAB-CHECK PASS|FAIL|SKIP name: detail" lines;
 * the exit status is the number of failed checks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/kvm.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/klog.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "meminfo.h"

#define CORRUPT_VA "/sys/kernel/debug/hwpoison/corrupt-va"
#define KPF_HWPOISON 19
#define KPF_THP 22
#define KPF_ZERO_PAGE 24
#define PM_PRESENT (1ULL << 63)
#define PM_PFN_MASK ((1ULL << 55) - 1)
#define HPAGE (2UL << 20)

static int failures;

static void report(const char *verdict, const char *name, const char *fmt, va_list ap)
{
	printf("HWLAB-CHECK %s %s: ", verdict, name);
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
}

static void __attribute__((format(printf, 3, 4))) check(int ok, const char *name,
							 const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report(ok ? "PASS" : "FAIL", name, fmt, ap);
	va_end(ap);
	if (!ok)
		failures++;
}

static void __attribute__((format(printf, 2, 3))) skip(const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report("SKIP", name, fmt, ap);
	va_end(ap);
}

static const char *errno_name(int e)
{
	switch (e) {
	case 0: return "none";
	case EINVAL: return "EINVAL";
	case ESRCH: return "ESRCH";
	case EFAULT: return "EFAULT";
	case EHWPOISON: return "EHWPOISON";
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case EINTR: return "EINTR";
	case EBUSY: return "EBUSY";
	case ENXIO: return "ENXIO";
	case ENOENT: return "ENOENT";
	default: return "other";
	}
}

/* Write s to corrupt-va: 0 on success, else the errno. */
static int corrupt_va(const char *s)
{
	int fd = open(CORRUPT_VA, O_WRONLY);
	int err = 0;

	if (fd < 0)
		return errno;
	if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		err = errno ? errno : EIO;
	close(fd);
	return err;
}

static int corrupt_va_at(pid_t pid, const void *addr)
{
	char s[64];

	snprintf(s, sizeof(s), "%d %#lx\n", (int)pid, (unsigned long)addr);
	return corrupt_va(s);
}

static uint64_t read_u64(const char *path, uint64_t index)
{
	uint64_t v = 0;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return 0;
	if (pread(fd, &v, sizeof(v), (off_t)(index * sizeof(v))) != sizeof(v))
		v = 0;
	close(fd);
	return v;
}

static uint64_t pagemap(const void *addr)
{
	return read_u64("/proc/self/pagemap", (uintptr_t)addr / 4096);
}

static uint64_t kpageflags(uint64_t pfn)
{
	return read_u64("/proc/kpageflags", pfn);
}

static long rss_pages(void)
{
	long size = -1, resident = -1;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f)
		return -1;
	if (fscanf(f, "%ld %ld", &size, &resident) != 2)
		resident = -1;
	fclose(f);
	return resident;
}

static int file_has(const char *path, const char *word)
{
	char buf[256] = "";
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return strstr(buf, word) != NULL;
}

/*
 * A read of untouched, aligned MADV_HUGEPAGE memory maps the huge zero page,
 * which every process shares: corrupt-va must refuse it (EFAULT), not poison
 * it and fail to split it.
 */
static void huge_zero_page(void)
{
	char *map, *p;
	volatile char c;
	uint64_t pm, flags;
	long hc;
	int err;

	if (!file_has("/sys/kernel/mm/transparent_hugepage/enabled", "[madvise]") &&
	    !file_has("/sys/kernel/mm/transparent_hugepage/enabled", "[always]")) {
		skip("va-huge-zero", "THP is disabled in this kernel");
		return;
	}
	if (!file_has("/sys/kernel/mm/transparent_hugepage/use_zero_page", "1")) {
		skip("va-huge-zero", "the huge zero page is disabled");
		return;
	}
	map = mmap(NULL, 2 * HPAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED) {
		check(0, "va-huge-zero", "mmap 4 MiB: %s", strerror(errno));
		return;
	}
	p = (char *)(((uintptr_t)map + HPAGE - 1) & ~(HPAGE - 1));
	madvise(p, HPAGE, MADV_HUGEPAGE);
	c = p[0x1000];
	(void)c;
	pm = pagemap(p + 0x1000);
	flags = (pm & PM_PRESENT) ? kpageflags(pm & PM_PFN_MASK) : 0;
	check((flags & (1ULL << KPF_ZERO_PAGE)) && (flags & (1ULL << KPF_THP)),
	      "va-huge-zero-mapped",
	      "a read of aligned MADV_HUGEPAGE memory maps the huge zero page (pfn %#llx, kpageflags %#llx)",
	      (unsigned long long)(pm & PM_PFN_MASK), (unsigned long long)flags);
	hc = hardware_corrupted_kb();
	err = corrupt_va_at(getpid(), p + 0x1000);
	check(err == EFAULT, "va-huge-zero-efault", "corrupt-va on the huge zero page: EFAULT (got %s)",
	      errno_name(err));
	check(hardware_corrupted_kb() == hc, "va-huge-zero-not-poisoned",
	      "HardwareCorrupted unchanged (%ld kB before, %ld kB after)", hc, hardware_corrupted_kb());
	if (pm & PM_PRESENT) {
		flags = kpageflags(pm & PM_PFN_MASK);
		check(!(flags & (1ULL << KPF_HWPOISON)), "va-huge-zero-no-hwpoison",
		      "the huge zero page has no PG_hwpoison (kpageflags %#llx)", (unsigned long long)flags);
	}
	munmap(map, 2 * HPAGE);
}

/*
 * Memory never touched: EFAULT, and nothing faulted in to be poisoned, not
 * even the zero page (pagemap shows the page still absent, RSS unchanged).
 */
static void unpopulated(const char *name, int flags)
{
	char n1[64], n2[64];
	char *p;
	long hc, rss;
	int err;

	p = mmap(NULL, 64 << 10, PROT_READ | PROT_WRITE, flags | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		check(0, name, "mmap: %s", strerror(errno));
		return;
	}
	madvise(p, 64 << 10, MADV_NOHUGEPAGE);
	hc = hardware_corrupted_kb();
	rss = rss_pages();
	err = corrupt_va_at(getpid(), p + 0x2000);
	snprintf(n1, sizeof(n1), "%s-efault", name);
	snprintf(n2, sizeof(n2), "%s-not-faulted-in", name);
	check(err == EFAULT, n1, "corrupt-va on untouched memory: EFAULT (got %s)", errno_name(err));
	check(!(pagemap(p + 0x2000) & PM_PRESENT) && rss_pages() == rss &&
	      hardware_corrupted_kb() == hc, n2,
	      "still not present (pagemap %#llx), RSS %ld -> %ld pages, HardwareCorrupted %ld -> %ld kB",
	      (unsigned long long)pagemap(p + 0x2000), rss, rss_pages(), hc, hardware_corrupted_kb());
	munmap(p, 64 << 10);
}

/* A page of our own, written so that it is present. */
static char *own_page(void)
{
	char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memset(p, 0x5a, 4096);
	return p;
}

/* Input the old sscanf("%d %lx") accepted: each must be EINVAL, nothing poisoned. */
static void malformed(void)
{
	char s[96];
	char *p = own_page();
	long hc = hardware_corrupted_kb();
	int err;

	if (!p) {
		check(0, "va-malformed", "mmap: %s", strerror(errno));
		return;
	}
	snprintf(s, sizeof(s), "%d %#lx junk\n", (int)getpid(), (unsigned long)p);
	err = corrupt_va(s);
	check(err == EINVAL, "va-trailing-garbage", "'PID VADDR junk': EINVAL (got %s)", errno_name(err));
	snprintf(s, sizeof(s), "%d %#lxzz\n", (int)getpid(), (unsigned long)p);
	err = corrupt_va(s);
	check(err == EINVAL, "va-garbage-in-vaddr", "'PID VADDRzz': EINVAL (got %s)", errno_name(err));
	/* getpid() + 2^32 truncates to getpid() in an int */
	snprintf(s, sizeof(s), "%lld %#lx\n", (long long)getpid() + (1LL << 32), (unsigned long)p);
	err = corrupt_va(s);
	check(err == EINVAL, "va-pid-overflow", "a pid over INT_MAX (getpid() + 2^32): EINVAL (got %s)",
	      errno_name(err));
	snprintf(s, sizeof(s), "%d\n", (int)getpid());
	err = corrupt_va(s);
	check(err == EINVAL, "va-pid-only", "'PID' alone: EINVAL (got %s)", errno_name(err));
	check(hardware_corrupted_kb() == hc, "va-malformed-not-poisoned",
	      "HardwareCorrupted unchanged (%ld -> %ld kB)", hc, hardware_corrupted_kb());
}

/* The second injection at one address finds the page already poisoned. */
static void twice(void)
{
	char *p = own_page();
	long hc = hardware_corrupted_kb();
	int err;

	if (!p) {
		check(0, "va-twice", "mmap: %s", strerror(errno));
		return;
	}
	/* late kill: this process is not signalled until it touches the page */
	prctl(PR_MCE_KILL, PR_MCE_KILL_SET, PR_MCE_KILL_LATE, 0, 0);
	err = corrupt_va_at(getpid(), p);
	check(err == 0, "va-own-page", "corrupt-va on a page of our own succeeds (got %s)",
	      errno_name(err));
	check(hardware_corrupted_kb() == hc + 4, "va-own-page-poisoned",
	      "HardwareCorrupted grew by 4 kB (%ld -> %ld kB)", hc, hardware_corrupted_kb());
	err = corrupt_va_at(getpid(), p);
	check(err == EHWPOISON, "va-twice-ehwpoison",
	      "the same address again: EHWPOISON (got %s)", errno_name(err));
	check(hardware_corrupted_kb() == hc + 4, "va-twice-counted-once",
	      "HardwareCorrupted grew by 4 kB only (%ld -> %ld kB)", hc, hardware_corrupted_kb());
}

static int drop_cap_sys_ptrace(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data))
		return -1;
	data[CAP_SYS_PTRACE / 32].effective &= ~(1U << (CAP_SYS_PTRACE % 32));
	data[CAP_SYS_PTRACE / 32].permitted &= ~(1U << (CAP_SYS_PTRACE % 32));
	return syscall(SYS_capset, &hdr, data) ? -1 : 0;
}

/*
 * ptrace rules apply: a writer with CAP_SYS_ADMIN but without CAP_SYS_PTRACE
 * may not poison a non-dumpable process: EPERM, the errno process_vm_writev()
 * gives for the same refusal (the v2 patch passed mm_access()'s EACCES on).
 */
static void ptrace_denied(void)
{
	int to_parent[2], to_target[2], status;
	pid_t target, prober;
	char *p = NULL;
	long hc;
	char b = 0;

	if (pipe(to_parent) || pipe(to_target)) {
		check(0, "va-ptrace", "pipe: %s", strerror(errno));
		return;
	}
	target = fork();
	if (target == 0) {
		p = own_page();
		prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
		if (write(to_parent[1], &p, sizeof(p)) != sizeof(p))
			_exit(1);
		if (read(to_target[0], &b, 1) < 0)
			_exit(1);
		_exit(0);
	}
	if (read(to_parent[0], &p, sizeof(p)) != sizeof(p) || !p) {
		check(0, "va-ptrace", "the target did not start");
		return;
	}
	hc = hardware_corrupted_kb();
	prober = fork();
	if (prober == 0) {
		int err;

		if (drop_cap_sys_ptrace()) {
			printf("  capset: %s\n", strerror(errno));
			_exit(2);
		}
		err = corrupt_va_at(target, p);
		printf("  corrupt-va as a writer without CAP_SYS_PTRACE: %s\n", errno_name(err));
		_exit(err == EPERM ? 0 : 1);
	}
	waitpid(prober, &status, 0);
	check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "va-ptrace-eperm",
	      "a writer without CAP_SYS_PTRACE, on a non-dumpable process: EPERM, as process_vm_writev() (prober exit %d)",
	      WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	check(hardware_corrupted_kb() == hc, "va-ptrace-not-poisoned",
	      "HardwareCorrupted unchanged (%ld -> %ld kB)", hc, hardware_corrupted_kb());
	if (write(to_target[1], &b, 1) < 0)
		kill(target, SIGKILL);
	waitpid(target, &status, 0);
}

/* --- the pages corrupt-va must poison, and those it must leave alone --- */

#define PG 4096UL
#define NPAGES 8UL		/* 4 KiB targets: an 8-page mapping ... */
#define POFF (3 * PG)		/* ... whose page 3 is the one poisoned */
#define HPOFF (5 * PG)		/* 2 MiB targets: a tail page */
#define TOUCH 0x10		/* where in the page an access is */
#define PM_SWAP (1ULL << 62)
#define KPF_LRU 5
#define FS_DIR "/mnt"		/* ext2 on /dev/ram0, mounted by the scenario */
#define EXT2_MAGIC 0xEF53
#define HWPOISON_DIR "/sys/kernel/debug/hwpoison"
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif
#ifndef BUS_MCEERR_AR
#define BUS_MCEERR_AR 4
#endif

static sigjmp_buf jb;
static volatile sig_atomic_t in_access, got_sig, got_code, got_lsb;
static void *volatile got_addr;

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

/* Read one byte at addr: 1 if that took a SIGBUS (got_* say which), else 0. */
static int touch(const void *addr)
{
	got_sig = 0;
	got_code = 0;
	got_lsb = 0;
	got_addr = NULL;
	in_access = 1;
	if (sigsetjmp(jb, 1)) {
		in_access = 0;
		return 1;
	}
	(void)*(const volatile unsigned char *)addr;
	in_access = 0;
	return 0;
}

static unsigned char pat(unsigned long off) { return (unsigned char)(off * 7 + 3 + (off >> 12)); }

static void fill(unsigned char *p, unsigned long len)
{
	for (unsigned long i = 0; i < len; i++)
		p[i] = pat(i);
}

/* Whether [from, to) of p holds the pattern: 1 yes, 0 no, -1 a page of it took a SIGBUS. */
static int intact(const unsigned char *p, unsigned long from, unsigned long to)
{
	for (unsigned long i = from; i < to; i += PG)
		if (touch(p + i))
			return -1;
	for (unsigned long i = from; i < to; i++)
		if (p[i] != pat(i))
			return 0;
	return 1;
}

static const char *intact_name(int r) { return r < 0 ? "SIGBUS" : r ? "intact" : "differs"; }

/* NAME-WHAT, for the check names of one target (a few live at once) */
static const char *cname(const char *name, const char *what)
{
	static char b[8][96];
	static unsigned int i;
	char *s = b[i++ % 8];

	snprintf(s, sizeof(b[0]), "%s-%s", name, what);
	return s;
}

/* Whether the kernel's log (all of the ring buffer) holds s. */
static int kmsg_has(const char *s)
{
	int size = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0), n, found;
	char *buf;

	if (size <= 0)
		size = 1 << 20;
	buf = malloc((size_t)size + 1);
	if (!buf)
		return 0;
	n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, size);
	buf[n > 0 ? n : 0] = '\0';
	found = strstr(buf, s) != NULL;
	free(buf);
	return found;
}

/* The start of the mapping /proc/self/maps names NAME ("[vdso]"), or 0. */
static unsigned long mapping_start(const char *name)
{
	char line[512];
	unsigned long start = 0, s, e;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return 0;
	while (!start && fgets(line, sizeof(line), f)) {
		size_t n = strlen(line);

		while (n && line[n - 1] == '\n')
			line[--n] = '\0';
		if (n >= strlen(name) && !strcmp(line + n - strlen(name), name) &&
		    sscanf(line, "%lx-%lx", &s, &e) == 2)
			start = s;
	}
	fclose(f);
	return start;
}

/* Write VAL to HWPOISON_DIR/NAME: 0, or the errno. */
static int knob(const char *name, const char *val)
{
	char path[128];
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/%s", HWPOISON_DIR, name);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return errno;
	if (write(fd, val, strlen(val)) != (ssize_t)strlen(val))
		err = errno ? errno : EIO;
	close(fd);
	return err;
}

/* A page corrupt-va must poison, in a mapping of ours filled with pat(). */
struct target {
	const char *name;	/* check names: NAME-write, NAME-recovery, ... */
	const char *what;	/* what it is, for the detail */
	unsigned char *map;
	unsigned long len, off;	/* the mapping; the page poisoned in it */
	const char *type;	/* the kernel's "recovery action for TYPE: Recovered" */
	int lsb;		/* an access then gets SIGBUS BUS_MCEERR_AR with this
				 * lsb; 0: no signal (a clean page the kernel dropped,
				 * read back from disk) */
	int huge;		/* hugetlb: the whole 2 MiB page is lost */
};

/*
 * corrupt-va on t's page: the write succeeds, the kernel logs its recovery
 * line for that pfn, HardwareCorrupted grows by one page, an access gets the
 * SIGBUS of a late kill (or, for a clean page, reads it back), and the rest
 * of the mapping is intact (hugetlb: lost with it).
 */
static void poisoned(const struct target *t)
{
	unsigned char *a = t->map + t->off;
	uint64_t pm = pagemap(a);
	unsigned long pfn = pm & PM_PFN_MASK;
	char want[160];
	long hc, hc2;
	int err, r, rest;

	if (!(pm & PM_PRESENT) || !pfn) {
		check(0, cname(t->name, "present"), "%s: the page to poison is not present (pagemap %#llx)",
		      t->what, (unsigned long long)pm);
		return;
	}
	hc = hardware_corrupted_kb();
	err = corrupt_va_at(getpid(), a);
	hc2 = hardware_corrupted_kb();
	check(err == 0, cname(t->name, "write"), "corrupt-va on %s (pfn %#lx) succeeds (got %s)", t->what,
	      pfn, errno_name(err));
	snprintf(want, sizeof(want), "Memory failure: %#lx: recovery action for %s: Recovered", pfn, t->type);
	check(kmsg_has(want), cname(t->name, "recovery"), "the kernel logged '%s'", want);
	check(hc2 == hc + 4, cname(t->name, "hwcorrupted"), "HardwareCorrupted +4 kB (%ld -> %ld kB)", hc, hc2);
	r = touch(a + TOUCH);
	if (t->lsb)
		check(r && got_code == BUS_MCEERR_AR && got_addr == a + TOUCH && got_lsb == t->lsb,
		      cname(t->name, "sigbus"),
		      "an access gets SIGBUS BUS_MCEERR_AR at its address, lsb %d (got %s, si_code %d, offset %#lx, lsb %d)",
		      t->lsb, r ? "SIGBUS" : "no signal", (int)got_code,
		      r ? (unsigned long)((unsigned char *)got_addr - t->map) : 0UL, (int)got_lsb);
	else {
		rest = r ? -1 : intact(t->map, t->off, t->off + PG);
		check(rest == 1, cname(t->name, "reread"),
		      "an access gets no signal and reads the page back from disk intact (got %s)",
		      intact_name(rest));
	}
	if (t->huge) {
		r = touch(t->map);
		check(r && got_code == BUS_MCEERR_AR && got_lsb == 21, cname(t->name, "whole"),
		      "the whole 2 MiB page is lost: an access at its start gets SIGBUS lsb 21 too (got %s, lsb %d)",
		      r ? "SIGBUS" : "no signal", (int)got_lsb);
	} else {
		int before = intact(t->map, 0, t->off), after = intact(t->map, t->off + PG, t->len);

		check(before == 1 && after == 1, cname(t->name, "rest"),
		      "the other pages of the mapping are intact (before it: %s, after it: %s)",
		      intact_name(before), intact_name(after));
	}
}

/*
 * corrupt-va on a of ours must fail with want, poisoning nothing:
 * HardwareCorrupted unchanged and, for a page that is there, no PG_hwpoison.
 */
static void refused(const char *name, const char *what, const void *a, int want)
{
	uint64_t pm = pagemap(a);
	long hc = hardware_corrupted_kb(), hc2;
	char lower[16];
	int err = corrupt_va_at(getpid(), a);
	size_t i;

	hc2 = hardware_corrupted_kb();
	snprintf(lower, sizeof(lower), "%s", errno_name(want));
	for (i = 0; lower[i]; i++)
		lower[i] = (char)(lower[i] | 0x20);
	check(err == want, cname(name, lower), "corrupt-va on %s: %s (got %s)", what, errno_name(want),
	      errno_name(err));
	check(hc2 == hc, cname(name, "not-poisoned"), "HardwareCorrupted unchanged (%ld -> %ld kB)", hc, hc2);
	if ((pm & PM_PRESENT) && (pm & PM_PFN_MASK)) {
		uint64_t flags = kpageflags(pm & PM_PFN_MASK);

		check(!(flags & (1ULL << KPF_HWPOISON)), cname(name, "no-hwpoison"),
		      "its page (pfn %#llx) has no PG_hwpoison (kpageflags %#llx)",
		      (unsigned long long)(pm & PM_PFN_MASK), (unsigned long long)flags);
	}
}

static unsigned char *anon_pages(int flags)
{
	unsigned char *p = mmap(NULL, NPAGES * PG, PROT_READ | PROT_WRITE, flags | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	madvise(p, NPAGES * PG, MADV_NOHUGEPAGE);
	fill(p, NPAGES * PG);
	return p;
}

/* ext2 on FS_DIR, where the file targets live */
static int fs_ready(const char *name)
{
	struct statfs sf;

	if (statfs(FS_DIR, &sf) || sf.f_type != EXT2_MAGIC) {
		check(0, name, "no ext2 at %s (the scenario mounts /dev/ram0 there)", FS_DIR);
		return 0;
	}
	return 1;
}

/*
 * FS_DIR/NAME, NPAGES long, mapped shared at its start. Dirty: written
 * through the mapping (dirty page cache). Clean: written with write() and
 * fsync()ed, then mapped read-only; touched (mapped in) unless !touched.
 */
static unsigned char *file_pages(const char *name, int dirty, int touched, int *fdp)
{
	unsigned long len = NPAGES * PG;
	unsigned char *p, *b;
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", FS_DIR, name);
	unlink(path);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return NULL;
	if (dirty) {
		if (ftruncate(fd, (off_t)len))
			goto fail;
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED)
			goto fail;
		fill(p, len);
	} else {
		b = malloc(len);
		if (!b)
			goto fail;
		fill(b, len);
		if (write(fd, b, len) != (ssize_t)len || fsync(fd)) {
			free(b);
			goto fail;
		}
		free(b);
		p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED)
			goto fail;
		for (unsigned long i = 0; touched && i < len; i += PG)
			(void)*(volatile unsigned char *)(p + i);
	}
	*fdp = fd;
	return p;
fail:
	close(fd);
	return NULL;
}

/* Whether the page cache holds the page of the file mapping at p. */
static int resident(void *p)
{
	unsigned char v = 0;

	return !mincore(p, PG, &v) && (v & 1);
}

/*
 * A page of the kernel's own that a process maps, not on the LRU and not
 * hugetlb: a vCPU's kvm_run (hwlab-vmm maps one per vCPU). memory_failure()
 * cannot handle it; corrupt-va must refuse it (EBUSY) before poisoning it.
 */
static void not_lru(void)
{
	int kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC), vm = -1, vcpu = -1;
	unsigned char *run = MAP_FAILED;
	uint64_t pm;
	long size = 0;

	if (kvm < 0) {
		skip("va-kvm-run", "no /dev/kvm (%s): no kvm_run page to try", strerror(errno));
		return;
	}
	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	vcpu = vm < 0 ? -1 : ioctl(vm, KVM_CREATE_VCPU, 0);
	size = ioctl(kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (vcpu >= 0 && size > 0)
		run = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, vcpu, 0);
	if (run == MAP_FAILED) {
		check(0, "va-kvm-run", "a vCPU's kvm_run mapping: %s", strerror(errno));
		goto out;
	}
	touch(run);
	pm = pagemap(run);
	printf("  kvm_run at %p: pfn %#llx, kpageflags %#llx (LRU bit %d)\n", (void *)run,
	       (unsigned long long)(pm & PM_PFN_MASK),
	       (unsigned long long)kpageflags(pm & PM_PFN_MASK),
	       !!(kpageflags(pm & PM_PFN_MASK) & (1ULL << KPF_LRU)));
	refused("va-kvm-run", "a vCPU's kvm_run page (a kernel page, neither LRU nor hugetlb)", run, EBUSY);
	munmap(run, (size_t)size);
out:
	if (vcpu >= 0)
		close(vcpu);
	if (vm >= 0)
		close(vm);
	close(kvm);
}

static int swap_on(void)
{
	char line[256];
	int n = 0;
	FILE *f = fopen("/proc/swaps", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		n++;
	fclose(f);
	return n > 1;
}

/*
 * A page out on swap is not in memory: EFAULT, and it stays out (pagemap's
 * swap bit still set, not present); it comes back intact when touched.
 */
static void swapped_out(void)
{
	unsigned char *p;
	uint64_t pm = 0;
	int tries, r;

	if (!swap_on()) {
		check(0, "va-swapped", "no swap in /proc/swaps (the scenario swapons /dev/ram1)");
		return;
	}
	p = anon_pages(MAP_PRIVATE);
	if (!p) {
		check(0, "va-swapped", "mmap: %s", strerror(errno));
		return;
	}
	/* a page still in a per-CPU LRU batch is not reclaimed: ask again */
	for (tries = 0; tries < 20 && !(pm & PM_SWAP); tries++) {
		madvise(p + POFF, PG, MADV_PAGEOUT);
		pm = pagemap(p + POFF);
	}
	if (!(pm & PM_SWAP)) {
		check(0, "va-swapped-out", "MADV_PAGEOUT did not swap the page out (pagemap %#llx)",
		      (unsigned long long)pm);
		return;
	}
	refused("va-swapped", "a swapped-out page", p + POFF, EFAULT);
	pm = pagemap(p + POFF);
	check((pm & PM_SWAP) && !(pm & PM_PRESENT), "va-swapped-stays-out",
	      "still swapped out, not read in (pagemap %#llx)", (unsigned long long)pm);
	r = intact(p, 0, NPAGES * PG);
	check(r == 1, "va-swapped-data", "its data comes back from swap intact (%s)", intact_name(r));
	munmap(p, NPAGES * PG);
}

/*
 * File pages this process has not mapped in: one in the page cache, one
 * evicted from it. EFAULT both; the first stays unmapped, the second out of
 * memory; the data reads back intact.
 */
static void file_not_mapped(void)
{
	unsigned char *p;
	int fd = -1, r;

	if (!fs_ready("va-file-unmapped"))
		return;
	p = file_pages("cva.unmapped", 0, 0, &fd);
	if (!p) {
		check(0, "va-file-unmapped", "file in %s: %s", FS_DIR, strerror(errno));
		return;
	}
	if (!resident(p + POFF) || (pagemap(p + POFF) & PM_PRESENT)) {
		check(0, "va-file-unmapped-setup", "the page is in the page cache (%d) and not mapped (pagemap %#llx)",
		      resident(p + POFF), (unsigned long long)pagemap(p + POFF));
	} else {
		refused("va-file-unmapped", "a file page in the page cache, not mapped", p + POFF, EFAULT);
		check(!(pagemap(p + POFF) & PM_PRESENT), "va-file-unmapped-stays",
		      "still not mapped in (pagemap %#llx)", (unsigned long long)pagemap(p + POFF));
	}

	/* out of the page cache: clean, fsync()ed and not mapped, DONTNEED drops it */
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	if (resident(p + POFF)) {
		check(0, "va-file-evicted-setup", "POSIX_FADV_DONTNEED left the page in the page cache");
	} else {
		refused("va-file-evicted", "a file page not in memory", p + POFF, EFAULT);
		check(!resident(p + POFF) && !(pagemap(p + POFF) & PM_PRESENT), "va-file-evicted-stays-out",
		      "still not in the page cache (mincore %d) nor mapped (pagemap %#llx)",
		      resident(p + POFF), (unsigned long long)pagemap(p + POFF));
	}
	r = intact(p, 0, NPAGES * PG);
	check(r == 1, "va-file-not-mapped-data", "the file reads back intact (%s)", intact_name(r));
	munmap(p, NPAGES * PG);
	close(fd);
}

/* hugetlb, 2 MiB: private anonymous (MAP_HUGETLB), and a shared hugetlbfs file (memfd) */
static void hugetlb(void)
{
	unsigned char *p;
	int fd;

	p = mmap(NULL, HPAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (p == MAP_FAILED) {
		check(0, "va-hugetlb-private", "mmap MAP_HUGETLB: %s (the scenario reserves huge pages)",
		      strerror(errno));
	} else {
		fill(p, HPAGE);
		poisoned(&(struct target){ "va-hugetlb-private", "a tail page of a private hugetlb page", p,
					   HPAGE, HPOFF, "huge page", 21, 1 });
		munmap(p, HPAGE);
	}

	fd = memfd_create("corrupt_va_probe", MFD_HUGETLB | MFD_CLOEXEC);
	p = fd < 0 || ftruncate(fd, HPAGE) ? MAP_FAILED :
		mmap(NULL, HPAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		check(0, "va-hugetlb-shared", "a shared mapping of a hugetlbfs file (memfd_create MFD_HUGETLB): %s",
		      strerror(errno));
	} else {
		fill(p, HPAGE);
		poisoned(&(struct target){ "va-hugetlb-shared",
					   "a tail page of a shared hugetlbfs file page", p, HPAGE, HPOFF,
					   "huge page", 21, 1 });
		munmap(p, HPAGE);
	}
	if (fd >= 0)
		close(fd);
}

/* A subpage of a THP: memory_failure() splits it and loses that 4 KiB page only. */
static void thp(void)
{
	unsigned char *raw, *p;
	uint64_t pm, flags;

	if (!file_has("/sys/kernel/mm/transparent_hugepage/enabled", "[madvise]") &&
	    !file_has("/sys/kernel/mm/transparent_hugepage/enabled", "[always]")) {
		skip("va-thp", "THP is disabled in this kernel");
		return;
	}
	raw = mmap(NULL, 2 * HPAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED) {
		check(0, "va-thp", "mmap 4 MiB: %s", strerror(errno));
		return;
	}
	p = (unsigned char *)(((uintptr_t)raw + HPAGE - 1) & ~(HPAGE - 1));
	madvise(p, HPAGE, MADV_HUGEPAGE);
	fill(p, HPAGE);
	pm = pagemap(p);
	flags = (pm & PM_PRESENT) ? kpageflags(pm & PM_PFN_MASK) : 0;
	if (!(flags & (1ULL << KPF_THP))) {
		check(0, "va-thp-mapped", "written MADV_HUGEPAGE memory is not a THP (kpageflags %#llx)",
		      (unsigned long long)flags);
	} else {
		poisoned(&(struct target){ "va-thp", "a tail page of a THP", p, HPAGE, HPOFF,
					   "dirty LRU page", 12, 0 });
	}
	munmap(raw, 2 * HPAGE);
}

/* Page cache of ext2 (clean: dropped and read back; dirty: lost) and shmem. */
static void page_cache(void)
{
	unsigned char *p;
	int fd;

	if (fs_ready("va-file")) {
		p = file_pages("cva.clean", 0, 1, &fd);
		if (!p) {
			check(0, "va-file-clean", "file in %s: %s", FS_DIR, strerror(errno));
		} else {
			poisoned(&(struct target){ "va-file-clean", "a clean ext2 page-cache page", p,
						   NPAGES * PG, POFF, "clean LRU page", 0, 0 });
			munmap(p, NPAGES * PG);
			close(fd);
		}
		p = file_pages("cva.dirty", 1, 1, &fd);
		if (!p) {
			check(0, "va-file-dirty", "file in %s: %s", FS_DIR, strerror(errno));
		} else {
			poisoned(&(struct target){ "va-file-dirty", "a dirty ext2 page-cache page", p,
						   NPAGES * PG, POFF, "dirty LRU page", 12, 0 });
			munmap(p, NPAGES * PG);
			close(fd);
		}
	}
	p = anon_pages(MAP_SHARED);
	if (!p) {
		check(0, "va-shmem", "mmap MAP_SHARED|MAP_ANONYMOUS: %s", strerror(errno));
		return;
	}
	poisoned(&(struct target){ "va-shmem", "a shmem page (shared anonymous memory)", p, NPAGES * PG,
				   POFF, "dirty LRU page", 12, 0 });
	munmap(p, NPAGES * PG);
}

/*
 * corrupt-filter-enable=1 with corrupt-filter-dev-major/minor set to the
 * ext2 disk: the filters corrupt-pfn applies. A page of that file system
 * passes and is poisoned; an anonymous page (no device) is filtered: the
 * write succeeds, nothing is poisoned and the page reads intact.
 */
static void filter(void)
{
	char major_s[16], minor_s[16];
	unsigned char *p;
	struct stat st;
	long hc, hc2;
	int fd, err, r;
	uint64_t pm;

	if (!fs_ready("va-filter") || stat(FS_DIR, &st))
		return;
	snprintf(major_s, sizeof(major_s), "%u", major(st.st_dev));
	snprintf(minor_s, sizeof(minor_s), "%u", minor(st.st_dev));
	err = knob("corrupt-filter-dev-major", major_s);
	err = err ? err : knob("corrupt-filter-dev-minor", minor_s);
	err = err ? err : knob("corrupt-filter-enable", "1");
	if (err) {
		check(0, "va-filter", "setting the corrupt-filter-* files: %s", strerror(err));
		goto restore;
	}
	printf("  filter: corrupt-filter-enable 1, dev %s:%s (ext2 on %s)\n", major_s, minor_s, FS_DIR);

	p = anon_pages(MAP_PRIVATE);
	if (!p) {
		check(0, "va-filter-anon", "mmap: %s", strerror(errno));
	} else {
		pm = pagemap(p + POFF);
		hc = hardware_corrupted_kb();
		err = corrupt_va_at(getpid(), p + POFF);
		hc2 = hardware_corrupted_kb();
		check(err == 0, "va-filter-anon-write",
		      "an anonymous page, filtered out by the device filter: the write succeeds (got %s)",
		      errno_name(err));
		check(hc2 == hc, "va-filter-anon-not-poisoned", "HardwareCorrupted unchanged (%ld -> %ld kB)",
		      hc, hc2);
		check(!(kpageflags(pm & PM_PFN_MASK) & (1ULL << KPF_HWPOISON)), "va-filter-anon-no-hwpoison",
		      "its page (pfn %#llx) has no PG_hwpoison", (unsigned long long)(pm & PM_PFN_MASK));
		r = intact(p, 0, NPAGES * PG);
		check(r == 1, "va-filter-anon-data", "an access gets no signal, the data is intact (%s)",
		      intact_name(r));
		munmap(p, NPAGES * PG);
	}

	p = file_pages("cva.filter", 1, 1, &fd);
	if (!p) {
		check(0, "va-filter-ext2", "file in %s: %s", FS_DIR, strerror(errno));
	} else {
		poisoned(&(struct target){ "va-filter-ext2", "a dirty page of a file on the filter's device",
					   p, NPAGES * PG, POFF, "dirty LRU page", 12, 0 });
		munmap(p, NPAGES * PG);
		close(fd);
	}
restore:
	knob("corrupt-filter-enable", "0");
	knob("corrupt-filter-dev-major", "4294967295");
	knob("corrupt-filter-dev-minor", "4294967295");
}

/* Run PATH ARG as a new process: its wait status, or -1. */
static int new_process(const char *path, const char *arg0, const char *arg)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		execl(path, arg0, arg, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return st;
}

static const char *status_name(int st)
{
	static char b[32];

	if (st == -1)
		snprintf(b, sizeof(b), "fork/wait failed");
	else if (WIFSIGNALED(st))
		snprintf(b, sizeof(b), "killed by signal %d%s", WTERMSIG(st),
			 WTERMSIG(st) == SIGBUS ? " (SIGBUS)" : "");
	else
		snprintf(b, sizeof(b), "exit %d", WEXITSTATUS(st));
	return b;
}

/*
 * The vvar and vDSO special mappings of this process: EFAULT, nothing
 * poisoned, and the system still healthy: new processes run. The vDSO text
 * page is one page every process maps; the v2 patch poisoned it ("reserved
 * kernel page: Ignored"), and from then on every process died of SIGBUS at
 * its first vDSO access. Run last: on such a kernel nothing started later
 * would run, the scenario's own end included, so this reboots the outer VM
 * itself once it has reported (a clean stop instead of a hang until its
 * timeout).
 */
static void vdso(void)
{
	unsigned long vvar = mapping_start("[vvar]"), text = mapping_start("[vdso]");
	struct timespec ts;
	int st1, st2;

	/* a vDSO call: its text and the vvar data page are mapped in now */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (!vvar) {
		check(0, "va-vvar", "no [vvar] in /proc/self/maps");
	} else {
		touch((void *)vvar);
		refused("va-vvar", "this process's [vvar] (VM_IO|VM_PFNMAP)", (void *)vvar, EFAULT);
	}
	if (!text) {
		check(0, "va-vdso", "no [vdso] in /proc/self/maps");
		return;
	}
	refused("va-vdso", "this process's [vdso] text, a page every process shares", (void *)text, EFAULT);
	st1 = new_process("/bin/busybox", "busybox", "true");
	st2 = new_process("/proc/self/exe", "corrupt_va_probe", "true");
	check(st1 == 0, "va-vdso-after-busybox", "a new process (static busybox true) runs and exits 0 (got %s)",
	      status_name(st1));
	check(st2 == 0, "va-vdso-after-probe", "a new process (this static program) runs and exits 0 (got %s)",
	      status_name(st2));
	if (st1 != 0 || st2 != 0) {
		printf("corrupt_va_probe: new processes die: the system is broken (the vDSO poisoned?); "
		       "rebooting the outer VM now, as nothing exec'd later (its own poweroff included) would run\n");
		fflush(stdout);
		sync();
		reboot(RB_AUTOBOOT);
	}
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_sigaction = on_bus, .sa_flags = SA_SIGINFO };

	if (argc == 3 && !strcmp(argv[1], "write")) {
		int err = corrupt_va(argv[2]);

		printf("corrupt-va '%s': %s%s\n", argv[2], err ? "errno " : "ok",
		       err ? errno_name(err) : "");
		return err ? 1 : 0;
	}
	if (argc == 2 && !strcmp(argv[1], "true"))
		return 0;
	if (argc > 2 || (argc == 2 && strcmp(argv[1], "vdso"))) {
		fprintf(stderr, "usage: corrupt_va_probe [vdso | write STRING | true]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	sigaction(SIGBUS, &sa, NULL);
	/* late kill: this process is signalled only when it touches a poisoned page */
	prctl(PR_MCE_KILL, PR_MCE_KILL_SET, PR_MCE_KILL_LATE, 0, 0);
	if (argc == 2) {
		vdso();
		return failures;
	}
	huge_zero_page();
	unpopulated("va-unpopulated-anon", MAP_PRIVATE);
	unpopulated("va-unpopulated-shmem", MAP_SHARED);
	malformed();
	ptrace_denied();
	twice();
	not_lru();
	swapped_out();
	file_not_mapped();
	hugetlb();
	thp();
	page_cache();
	filter();
	return failures;
}
