// SPDX-License-Identifier: GPL-2.0
/*
 * Runs inside the outer VM (the uffd_poison scenario): userfaultfd's
 * UFFDIO_POISON (kernel series 11/18-18/18, v6.6 upstream), with which a
 * VMM marks a page of a userfaultfd-registered range as lost, e.g. a guest
 * page that was poisoned on the host it migrated from. The kernel installs
 * a pte marker; no page is consumed and nothing is hardware poisoned, but
 * an access faults as a hwpoisoned page: SIGBUS BUS_MCEERR_AR, si_addr the
 * address touched, si_addr_lsb PAGE_SHIFT (or the huge page's shift), and
 * GUP with FOLL_HWPOISON (KVM's, and MADV_POPULATE_READ's) gets -EHWPOISON.
 *
 * For an anonymous private range and a MAP_HUGETLB one (2 MiB pages; the
 * scenario reserves them), each registered in MISSING mode:
 *   - UFFDIO_API reports UFFD_FEATURE_POISON, and accepts it asked for;
 *     UFFDIO_REGISTER lists _UFFDIO_POISON among the range's ioctls;
 *   - UFFDIO_POISON of one page: 0, "updated" the page's size;
 *   - a read of it: SIGBUS BUS_MCEERR_AR at the address read, lsb 12 / 21,
 *     again on a second read (the marker stays), at an offset too;
 *   - MADV_POPULATE_READ of it: EHWPOISON;
 *   - the next page: UFFDIO_COPY fills it, its data reads back, no signal;
 *   - UFFDIO_POISON of that filled page, or of the poisoned one again: EEXIST;
 *   - a misaligned start, a zero or (hugetlb) partial length, an unknown
 *     mode: EINVAL; a range outside the registered one: ENOENT;
 *   - /proc/meminfo HardwareCorrupted unchanged at the end.
 *
 * Prints "HWLAB-CHECK PASS|FAIL name: detail" lines; exit status is the
 * number of failed checks. It takes signals at poisoned addresses on
 * purpose: it refuses to run outside the outer VM's image (/hwlab/scenarios).
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
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/userfaultfd.h>

#include "check.h"
#include "meminfo.h"
#include "uffd_poison_uapi.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef BUS_MCEERR_AR
#define BUS_MCEERR_AR 4
#endif

#define PAGE	4096UL
#define HUGE	(2UL << 20)

static sigjmp_buf touch_env;
static volatile sig_atomic_t sig_code, sig_lsb;
static void *volatile sig_addr;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	sig_code = si->si_code;
	sig_addr = si->si_addr;
	sig_lsb = si->si_addr_lsb;
	siglongjmp(touch_env, 1);
}

/* Read one byte at p; 1 when a SIGBUS came (sig_* say which), else 0. */
static int touch(const char *p, char *byte)
{
	sig_code = 0;
	sig_addr = NULL;
	sig_lsb = 0;
	if (sigsetjmp(touch_env, 1))
		return 1;
	*byte = *(const volatile char *)p;
	return 0;
}

static const char *code_name(int code)
{
	return code == BUS_MCEERR_AR ? "BUS_MCEERR_AR" :
	       code == BUS_MCEERR_AO ? "BUS_MCEERR_AO" :
	       code == BUS_ADRERR ? "BUS_ADRERR" : "other";
}

/* UFFDIO_POISON of [start, start + len): 0 or -errno; *updated as set */
static int poison(int uffd, unsigned long start, unsigned long len, __u64 mode,
		  long long *updated)
{
	struct uffdio_poison up = {
		.range = { .start = start, .len = len },
		.mode = mode,
		.updated = 0x5a5a,
	};
	int rc = ioctl(uffd, UFFDIO_POISON, &up);

	*updated = up.updated;
	return rc ? -errno : 0;
}

static int copy(int uffd, unsigned long dst, const void *src, unsigned long len,
		long long *copied)
{
	struct uffdio_copy uc = {
		.dst = dst,
		.src = (unsigned long)src,
		.len = len,
		.mode = 0,
	};
	int rc = ioctl(uffd, UFFDIO_COPY, &uc);

	*copied = uc.copy;
	return rc ? -errno : 0;
}

static int new_uffd(__u64 features, __u64 *got_features)
{
	struct uffdio_api api = { .api = UFFD_API, .features = features };
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return -errno;
	if (ioctl(fd, UFFDIO_API, &api)) {
		int e = errno;

		close(fd);
		return -e;
	}
	*got_features = api.features;
	return fd;
}

/* register [p, p + len) in MISSING mode; the range's ioctls, or 0 */
static __u64 reg(int uffd, void *p, unsigned long len)
{
	struct uffdio_register r = {
		.range = { .start = (unsigned long)p, .len = len },
		.mode = UFFDIO_REGISTER_MODE_MISSING,
	};

	if (ioctl(uffd, UFFDIO_REGISTER, &r))
		return 0;
	return r.ioctls;
}

/*
 * One kind of memory: four pages of size sz at p, registered with uffd.
 * Page 1 poisoned, page 2 filled with UFFDIO_COPY; pages 0 and 3 stay
 * missing and are never touched (a read would wait for a userfault).
 */
static void one_kind(int uffd, const char *k, char *p, unsigned long sz, int want_lsb)
{
	unsigned long bad = (unsigned long)p + sz, next = bad + sz;
	char name[64], byte = 0;
	long long n = 0;
	unsigned char *src;
	unsigned long i;
	__u64 ioctls = reg(uffd, p, 4 * sz);
	int rc, sig;

#define NAME(s) (snprintf(name, sizeof(name), "%s-%s", k, s), name)
	check(ioctls != 0, NAME("register"), "UFFDIO_REGISTER of 4 x %lu KiB, MISSING: %s",
	      sz >> 10, ioctls ? "ok" : strerror(errno));
	if (!ioctls)
		return;
	check(!!(ioctls & ((__u64)1 << _UFFDIO_POISON)), NAME("register-ioctls"),
	      "the range's ioctls include _UFFDIO_POISON (ioctls 0x%llx)",
	      (unsigned long long)ioctls);

	rc = poison(uffd, bad, sz, 0, &n);
	check(rc == 0 && n == (long long)sz, NAME("poison"),
	      "UFFDIO_POISON of page 1: 0, updated %lu (got %s, updated %lld)", sz,
	      rc ? strerror(-rc) : "0", n);

	sig = touch((char *)bad, &byte);
	check(sig && sig_code == BUS_MCEERR_AR && sig_addr == (void *)bad &&
	      sig_lsb == want_lsb, NAME("touch-sigbus"),
	      "a read of page 1: SIGBUS BUS_MCEERR_AR at %#lx lsb %d (got %s, %s at %p lsb %d)",
	      bad, want_lsb, sig ? "SIGBUS" : "no signal", code_name(sig_code),
	      (void *)sig_addr, (int)sig_lsb);

	/* the marker stays: a second read, at an offset, faults the same way */
	sig = touch((char *)bad + sz / 2 + 123, &byte);
	check(sig && sig_code == BUS_MCEERR_AR &&
	      sig_addr == (void *)(bad + sz / 2 + 123) && sig_lsb == want_lsb,
	      NAME("touch-again"),
	      "a second read, at %#lx: SIGBUS BUS_MCEERR_AR there, lsb %d (got %s, %s at %p lsb %d)",
	      bad + sz / 2 + 123, want_lsb, sig ? "SIGBUS" : "no signal",
	      code_name(sig_code), (void *)sig_addr, (int)sig_lsb);

	/* GUP with FOLL_HWPOISON, as KVM's hva_to_pfn() asks it */
	errno = 0;
	rc = madvise((void *)bad, sz, MADV_POPULATE_READ);
	check(rc == -1 && errno == EHWPOISON, NAME("gup-ehwpoison"),
	      "MADV_POPULATE_READ of page 1 (GUP, FOLL_HWPOISON): EHWPOISON (got %d, %s)",
	      rc, strerror(errno));

	src = malloc(sz);
	if (!src) {
		check(0, NAME("copy"), "malloc(%lu) failed", sz);
		return;
	}
	for (i = 0; i < sz; i++)
		src[i] = (unsigned char)(1 + i % 251);
	rc = copy(uffd, next, src, sz, &n);
	check(rc == 0 && n == (long long)sz, NAME("neighbour-copy"),
	      "UFFDIO_COPY of page 2, beside the poisoned one: 0, copied %lu (got %s, %lld)",
	      sz, rc ? strerror(-rc) : "0", n);
	if (rc == 0) {
		int same = 1, s1 = touch((char *)next, &byte),
		    s2 = touch((char *)next + sz - 1, &byte);

		for (i = 0; i < sz && same; i += PAGE / 2)
			same = (unsigned char)((char *)next)[i] == src[i];
		check(!s1 && !s2 && same, NAME("neighbour-data"),
		      "page 2 reads back its data without a signal (%s, %s)",
		      s1 || s2 ? "a signal" : "no signal", same ? "same data" : "other data");
	}
	free(src);

	rc = poison(uffd, next, sz, 0, &n);
	check(rc == -EEXIST && n == -EEXIST, NAME("populated-eexist"),
	      "UFFDIO_POISON of the filled page 2: EEXIST, updated -EEXIST (got %s, %lld)",
	      rc ? strerror(-rc) : "0", n);
	rc = poison(uffd, bad, sz, 0, &n);
	check(rc == -EEXIST, NAME("again-eexist"),
	      "UFFDIO_POISON of page 1 again (a marker is there): EEXIST (got %s)",
	      rc ? strerror(-rc) : "0");

	rc = poison(uffd, bad + 1, sz, 0, &n);
	check(rc == -EINVAL, NAME("misaligned-einval"),
	      "UFFDIO_POISON at page 1 + 1: EINVAL (got %s)", rc ? strerror(-rc) : "0");
	rc = poison(uffd, bad, 0, 0, &n);
	check(rc == -EINVAL, NAME("zero-len-einval"),
	      "UFFDIO_POISON of length 0: EINVAL (got %s)", rc ? strerror(-rc) : "0");
	rc = poison(uffd, (unsigned long)p + 3 * sz, sz, (__u64)1 << 1, &n);
	check(rc == -EINVAL, NAME("mode-einval"),
	      "UFFDIO_POISON with an unknown mode bit: EINVAL (got %s)",
	      rc ? strerror(-rc) : "0");
	if (sz > PAGE) {
		rc = poison(uffd, (unsigned long)p + 3 * sz, PAGE, 0, &n);
		check(rc == -EINVAL, NAME("partial-einval"),
		      "UFFDIO_POISON of 4 KiB of a huge page: EINVAL (got %s)",
		      rc ? strerror(-rc) : "0");
	}
	rc = poison(uffd, (unsigned long)p + 4 * sz, sz, 0, &n);
	check(rc == -ENOENT, NAME("unregistered-enoent"),
	      "UFFDIO_POISON of the page after the registered range: ENOENT (got %s)",
	      rc ? strerror(-rc) : "0");
#undef NAME
}

int main(void)
{
	struct sigaction sa = { 0 };
	__u64 features = 0;
	long hc_before, hc_after;
	int probe, uffd;
	char *anon, *huge;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (access("/hwlab/scenarios/_lib.sh", F_OK)) {
		fprintf(stderr, "uffd_poison: takes SIGBUS on purpose: it runs only in the outer VM\n");
		return 2;
	}
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigaction(SIGBUS, &sa, NULL);
	hc_before = hardware_corrupted_kb();

	probe = new_uffd(0, &features);
	check(probe >= 0, "uffd-api", "userfaultfd() and UFFDIO_API: %s",
	      probe >= 0 ? "ok" : strerror(-probe));
	if (probe < 0)
		return failures;
	check(!!(features & UFFD_FEATURE_POISON), "uffd-api-poison",
	      "UFFDIO_API advertises UFFD_FEATURE_POISON (features 0x%llx)",
	      (unsigned long long)features);
	close(probe);
	uffd = new_uffd(UFFD_FEATURE_POISON, &features);
	check(uffd >= 0, "uffd-api-ask-poison", "UFFDIO_API asking for UFFD_FEATURE_POISON: %s",
	      uffd >= 0 ? "ok" : strerror(-uffd));
	if (uffd < 0)
		return failures;

	/* five pages: four registered, the fifth unregistered (ENOENT) */
	anon = mmap(NULL, 5 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (anon == MAP_FAILED)
		check(0, "anon-mmap", "mmap of 5 anonymous pages: %s", strerror(errno));
	else
		one_kind(uffd, "anon", anon, PAGE, 12);

	huge = mmap(NULL, 5 * HUGE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (huge == MAP_FAILED)
		check(0, "hugetlb-mmap", "mmap of 5 x 2 MiB MAP_HUGETLB: %s (free huge pages?)",
		      strerror(errno));
	else
		one_kind(uffd, "hugetlb", huge, HUGE, 21);

	hc_after = hardware_corrupted_kb();
	check(hc_before >= 0 && hc_after == hc_before, "hardware-corrupted",
	      "HardwareCorrupted unchanged: a marker consumes no page (%ld kB, then %ld kB)",
	      hc_before, hc_after);
	return failures;
}
