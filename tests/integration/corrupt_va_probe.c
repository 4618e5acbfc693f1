// SPDX-License-Identifier: GPL-2.0
/*
 * Runs inside the outer VM, for the corrupt_va scenario (kernel patch 0002):
 * what debugfs hwpoison/corrupt-va must refuse, each checked with the
 * errno of the write and with HardwareCorrupted in /proc/meminfo, which any
 * page poisoned by mistake would raise.
 *
 *   corrupt_va_probe            the self-checks below, on pages of its own
 *   corrupt_va_probe write STR  write STR to corrupt-va once and print
 *                               "corrupt-va 'STR': ok" or "...: errno NAME";
 *                               exit 0 on success, 1 otherwise
 *
 * The self-checks print "HWLAB-CHECK PASS|FAIL|SKIP name: detail" lines;
 * the exit status is the number of failed checks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
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
 * may not poison a non-dumpable process (EACCES), as process_vm_writev()
 * may not write to it.
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
		_exit(err == EACCES ? 0 : 1);
	}
	waitpid(prober, &status, 0);
	check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "va-ptrace-eacces",
	      "a writer without CAP_SYS_PTRACE, on a non-dumpable process: EACCES (prober exit %d)",
	      WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	check(hardware_corrupted_kb() == hc, "va-ptrace-not-poisoned",
	      "HardwareCorrupted unchanged (%ld -> %ld kB)", hc, hardware_corrupted_kb());
	if (write(to_target[1], &b, 1) < 0)
		kill(target, SIGKILL);
	waitpid(target, &status, 0);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "write")) {
		int err = corrupt_va(argv[2]);

		printf("corrupt-va '%s': %s%s\n", argv[2], err ? "errno " : "ok",
		       err ? errno_name(err) : "");
		return err ? 1 : 0;
	}
	if (argc != 1) {
		fprintf(stderr, "usage: corrupt_va_probe [write STRING]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	huge_zero_page();
	unpopulated("va-unpopulated-anon", MAP_PRIVATE);
	unpopulated("va-unpopulated-shmem", MAP_SHARED);
	malformed();
	ptrace_denied();
	twice();
	return failures;
}
