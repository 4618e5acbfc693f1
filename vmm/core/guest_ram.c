// SPDX-License-Identifier: GPL-2.0
/*
 * Guest RAM's host mappings: created behind the memslots, and fresh ones
 * for poisoned pages and the boot area at reset. Publishing the memslot
 * table is guest_ram_publish.c's.
 */
#define _GNU_SOURCE
#include "core/guest_ram.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "core/hugetlb_salvage.h"
#include "core/kvm_ioctl.h"
#include "log.h"
#include "memmap.h"	/* HWLAB_GUEST_RAM_NAME */
#include "core/report.h"
#include "core/vm.h"

#define SZ_2M (2ULL << 20)
#define HUGETLB_DIR_2M "/sys/kernel/mm/hugepages/hugepages-2048kB"
#define HUGETLB_DIR_1G "/sys/kernel/mm/hugepages/hugepages-1048576kB"
#ifndef MAP_HUGE_2MB
#define MAP_HUGE_2MB (21 << 26)
#endif
#ifndef MFD_HUGE_2MB
#define MFD_HUGE_2MB (21U << 26)	/* MFD_HUGE_SHIFT 26, as MAP_HUGE_* */
#endif
#ifndef MAP_HUGE_1GB
#define MAP_HUGE_1GB (30 << 26)
#endif
#ifndef PR_SET_VMA
#define PR_SET_VMA		0x53564d41
#define PR_SET_VMA_ANON_NAME	0
#endif

/* Every anonymous guest RAM mapping so far got its name (1), or one did not (0). */
static int ram_named = -1;
/* --ksm: every anonymous mapping of guest RAM, a reset's too, is mergeable */
static int ram_mergeable;

/*
 * Mark guest RAM so that hwpoison-guest can tell it from the VMM's other
 * private writable memory (.bss, thread stacks, malloc arenas), which a
 * planted table could otherwise point it at:
 *  - MADV_DONTDUMP ("dd" in smaps): guest memory has no place in a core
 *    dump of the VMM anyway (QEMU's dump-guest-core=off), and every kernel
 *    has it;
 *  - its name, [anon:hwlab-guest-ram], where the kernel has
 *    CONFIG_ANON_VMA_NAME (EINVAL where not). hugetlb RAM has a hugetlbfs
 *    file behind it and cannot be named: the tool knows it by "ht".
 * With --ksm, anonymous guest RAM is also MADV_MERGEABLE (QEMU's
 * mem-merge=on), so that ksmd may share its pages.
 * Every mapping of guest RAM goes through here, the MAP_FIXED ones of a
 * reset included: a fresh page without the marks would be refused later.
 */
static int mark_guest_ram(void *p, uint64_t size, enum memslot_backing backing)
{
	if (madvise(p, size, MADV_DONTDUMP)) {
		pr_errno("madvise(MADV_DONTDUMP) on guest RAM");
		return -1;
	}
	/* a file mapping: the memfd has its name; hugetlb pages are never merged */
	if (memslot_backing_is_hugetlb(backing) || memslot_backing_is_shared_file(backing))
		return 0;
	if (ram_mergeable && madvise(p, size, MADV_MERGEABLE)) {
		pr_errno("madvise(MADV_MERGEABLE) on guest RAM (--ksm: is CONFIG_KSM set?)");
		return -1;
	}
	if (prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)p, (unsigned long)size,
		  (unsigned long)HWLAB_GUEST_RAM_NAME))
		ram_named = 0;
	else if (ram_named < 0)
		ram_named = 1;
	return 0;
}

/*
 * mmap (of fd at off, or anonymous with fd -1), then mark_guest_ram();
 * MAP_FAILED (errno set) if either fails
 */
static void *map_marked(void *at, uint64_t size, int flags, enum memslot_backing backing, int fd,
			off_t off)
{
	void *p = mmap(at, size, PROT_READ | PROT_WRITE, flags, fd, off);
	int e;

	if (p == MAP_FAILED || !mark_guest_ram(p, size, backing))
		return p;
	e = errno;
	if (!at)
		munmap(p, size);
	errno = e;
	return MAP_FAILED;
}

/*
 * A memfd mapped MAP_SHARED at offset 0 of slot s (or, at != NULL, its
 * range [at, at + size) again at that range's offset, after a reset punched
 * the old pages out). Shared, because then the file holds the guest's data.
 *  - hugetlb-shared: 2 MiB pages of a hugetlbfs memfd: when one 4 KiB of a
 *    huge page goes bad the kernel unmaps all 2 MiB, and read() of the file
 *    is the way back to the other 511 (hugetlb_salvage.c). A private
 *    mapping of the file would leave the guest's writes in anonymous copies
 *    the file never sees.
 *  - shmem: 4 KiB pages of a tmpfs memfd, QEMU's memory-backend-memfd
 *    (vhost-user devices map guest RAM through it). memory_failure() keeps
 *    a poisoned shmem page in the file (shmem_error_remove_folio() does not
 *    remove it): unmapped, it faults SIGBUS at the next touch and read()
 *    gives EIO, until the page is punched out, which is what a reset does
 *    here before the guest may use that address again.
 * Named like the rest of guest RAM ("memfd:hwlab-guest-ram" in maps).
 */
static void *map_shared_memfd(struct memslot *s, uint64_t size, void *at)
{
	off_t off = at ? (uint8_t *)at - s->hva : 0;
	unsigned int huge = s->backing == BACKING_HUGETLB_SHARED ? MFD_HUGETLB | MFD_HUGE_2MB : 0;
	int e;

	if (!at) {
		s->fd = memfd_create(HWLAB_GUEST_RAM_NAME, MFD_CLOEXEC | huge);
		if (s->fd < 0)
			return MAP_FAILED;
		if (ftruncate(s->fd, (off_t)size)) {
			e = errno;
			close(s->fd);
			s->fd = -1;
			errno = e;
			return MAP_FAILED;
		}
	} else if (fallocate(s->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off,
			     (off_t)size)) {
		/* the old (poisoned) pages out of the file, fresh ones at the next touch */
		return MAP_FAILED;
	}
	/* MAP_SHARED hugetlb reserves its pages here too: a small pool fails now */
	return map_marked(at, size, MAP_SHARED | (at ? MAP_FIXED : 0), s->backing, s->fd, off);
}

static void *map_guest_ram(uint64_t size, enum memslot_backing backing, void *at)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | (at ? MAP_FIXED : 0);
	uint8_t *p, *aligned;

	/*
	 * hugetlb without MAP_NORESERVE: the kernel reserves the huge pages at
	 * mmap time, so a pool that is too small fails here with ENOMEM and a
	 * message, instead of with a SIGBUS at the first touch (before the
	 * VMM's handler exists: rc 135, nothing said).
	 */
	if (backing == BACKING_HUGETLB)
		return map_marked(at, size, flags | MAP_HUGETLB | MAP_HUGE_2MB, backing, -1, 0);
	if (backing == BACKING_HUGETLB_1G)
		return map_marked(at, size, flags | MAP_HUGETLB | MAP_HUGE_1GB, backing, -1, 0);
	flags |= MAP_NORESERVE;
	if (backing == BACKING_ANON || at)
		return map_marked(at, size, flags, backing, -1, 0);
	/* THP: a 2 MiB-aligned range, so whole huge pages can back it. */
	p = mmap(NULL, size + SZ_2M, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (p == MAP_FAILED)
		return p;
	aligned = (uint8_t *)(((uintptr_t)p + SZ_2M - 1) & ~(SZ_2M - 1));
	if (aligned > p)
		munmap(p, aligned - p);
	munmap(aligned + size, p + size + SZ_2M - (aligned + size));
	if (madvise(aligned, size, MADV_HUGEPAGE))
		pr_warn("madvise(MADV_HUGEPAGE): %s", strerror(errno));
	if (mark_guest_ram(aligned, size, backing)) {
		munmap(aligned, size);
		errno = EINVAL;
		return MAP_FAILED;
	}
	return aligned;
}

/* The first line of a sysfs file into buf ("" if it cannot be read). */
static void read_line(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, len - 1);

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = 0;
	buf[strcspn(buf, "\n")] = 0;
}

/*
 * Why bytes of hugetlb guest RAM (backing b) could not be mapped, with the
 * numbers and the fix: the pages are reserved at mmap, so a short pool
 * fails there (ENOMEM), and a kernel without that page size (1 GiB pages
 * need the CPU's pdpe1gb) refuses the size itself (EINVAL).
 */
static void hugetlb_shortage(enum memslot_backing b, uint64_t bytes)
{
	int e = errno, gig = b == BACKING_HUGETLB_1G;
	const char *dir = gig ? HUGETLB_DIR_1G : HUGETLB_DIR_2M, *unit = gig ? "1 GiB" : "2 MiB";
	unsigned long long need = bytes / memslot_backing_page_size(b);
	char path[96], buf[32], fix[160];

	snprintf(path, sizeof(path), "%s/free_hugepages", dir);
	if (access(dir, F_OK)) {
		pr_err("cannot map %llu MiB of hugetlb guest RAM: %s: this kernel has no %s huge "
		       "pages (no %s%s)", (unsigned long long)(bytes >> 20), strerror(e), unit, dir,
		       gig ? ": the CPU needs pdpe1gb" : "");
		errno = e;
		return;
	}
	read_line(path, buf, sizeof(buf));
	if (gig)
		snprintf(fix, sizeof(fix), "echo %llu > %s/nr_hugepages, or boot with "
			 "hugepagesz=1G hugepages=%llu", need, dir, need);
	else
		snprintf(fix, sizeof(fix), "echo %llu > /proc/sys/vm/nr_hugepages", need);
	pr_err("cannot map %llu MiB of hugetlb guest RAM: %s: it needs %llu free %s page%s, "
	       "%s has %s (reserve them: %s)", (unsigned long long)(bytes >> 20), strerror(e),
	       need, unit, need == 1 ? "" : "s", path, buf[0] ? buf : "none", fix);
	errno = e;
}

/*
 * Fresh memory for [at, at + size) of slot s, in s's own kind: hugetlb pages
 * for hugetlb (for a shared memfd, the file's pages punched out and mapped
 * again, whatever a salvage had put there), 4 KiB anonymous pages otherwise.
 */
static void *remap_slot_range(struct memslot *s, uint64_t size, void *at)
{
	if (memslot_backing_is_shared_file(s->backing))
		return map_shared_memfd(s, size, at);
	return map_guest_ram(size, memslot_backing_is_hugetlb(s->backing) ? s->backing :
			     BACKING_ANON, at);
}

void *guest_ram_map_anon(uint64_t size)
{
	return map_guest_ram(size, BACKING_ANON, NULL);
}

void *guest_ram_map_file(const struct memslot *s, void *at, uint64_t size)
{
	return map_marked(at, size, MAP_SHARED | MAP_FIXED, BACKING_HUGETLB_SHARED, s->fd,
			  (uint8_t *)at - s->hva);
}

int guest_ram_create(struct vm *vm)
{
	const struct vmm_options *opt = vm->opt;
	uint64_t slot_size = opt->mem_size / opt->nr_slots;
	unsigned int i;

	ram_mergeable = opt->ksm;
	for (i = 0; i < opt->nr_slots; i++) {
		struct memslot *s = &vm->mem.slots[i];
		struct kvm_userspace_memory_region region;

		s->id = i;
		s->gpa = i * slot_size;
		s->size = slot_size;
		s->backing = opt->backing;
		s->fd = -1;
		s->hva = memslot_backing_is_shared_file(opt->backing) ?
			 map_shared_memfd(s, slot_size, NULL) :
			 map_guest_ram(slot_size, opt->backing, NULL);
		if (s->hva == MAP_FAILED) {
			if (memslot_backing_is_hugetlb(opt->backing))
				hugetlb_shortage(opt->backing, opt->mem_size);
			else
				pr_err("cannot map %llu MiB of %s guest RAM: %s",
				       (unsigned long long)(slot_size >> 20),
				       memslot_backing_name(opt->backing), strerror(errno));
			return -1;
		}
		region = (struct kvm_userspace_memory_region) {
			.slot = i,
			.guest_phys_addr = s->gpa,
			.memory_size = s->size,
			.userspace_addr = (uintptr_t)s->hva,
		};
		if (kvm_ioctl(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &region) < 0)
			return -1;
		vm->mem.count++;
	}
	return 0;
}

/* Fresh memory for [gpa, gpa + len), in whole granules of each slot's backing. */
static int refresh_range(struct vm *vm, uint64_t gpa, uint64_t len)
{
	uint64_t end = gpa + len;
	unsigned int i;

	for (i = 0; i < vm->mem.count; i++) {
		const struct memslot *s = &vm->mem.slots[i];
		int huge = memslot_backing_is_hugetlb(s->backing);
		uint64_t unit = memslot_backing_page_size(s->backing);
		uint64_t from = gpa > s->gpa ? gpa : s->gpa;
		uint64_t to = end < s->gpa + s->size ? end : s->gpa + s->size;

		if (from >= to)
			continue;
		from &= ~(unit - 1);
		to = (to + unit - 1) & ~(unit - 1);
		if (remap_slot_range(&vm->mem.slots[i], to - from,
				     s->hva + (from - s->gpa)) == MAP_FAILED) {
			if (huge)
				hugetlb_shortage(s->backing, to - from);
			else
				pr_errno("remapping the boot area at GPA %#llx",
					 (unsigned long long)from);
			return -1;
		}
	}
	return 0;
}

int guest_ram_refresh_boot_area(struct vm *vm, const uint64_t *gpa, const uint64_t *len,
				unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (refresh_range(vm, gpa[i], len[i]))
			return -1;
	return 0;
}

int guest_ram_remap_poisoned(struct vm *vm)
{
	struct poison_list list, *poisoned = &list;
	uint64_t salvaged[SALVAGE_MAX];
	unsigned int i, nsalvaged, j;
	int r = 0;

	guest_poison_take(&vm->poisoned, &list);
	/*
	 * A salvaged huge page is the salvage's scratch pages now, with its
	 * poison markers: the file's fresh pages go back there, whether the
	 * old guest was told of a page in it or only touched a healthy one
	 */
	nsalvaged = hugetlb_salvage_take(salvaged, SALVAGE_MAX);
	for (j = 0; j < nsalvaged; j++) {
		struct memslot *s = (struct memslot *)memslot_find_gpa(&vm->mem, salvaged[j]);

		if (!s || remap_slot_range(s, SALVAGE_UNIT, s->hva + (salvaged[j] - s->gpa)) ==
			  MAP_FAILED) {
			pr_errno("remapping salvaged GPA %#llx", (unsigned long long)salvaged[j]);
			r = -1;
			continue;
		}
		report("remap", "\"gpa\":\"%#llx\",\"bytes\":%llu,\"salvaged\":true",
		       (unsigned long long)salvaged[j], SALVAGE_UNIT);
	}
	for (i = 0; i < poisoned->count; i++) {
		uint64_t g = poisoned->gpas[i];
		const struct memslot *s = memslot_find_gpa(&vm->mem, g);
		uint64_t unit;
		int huge;

		if (!s)
			continue;
		huge = memslot_backing_is_hugetlb(s->backing);
		unit = huge ? memslot_backing_page_size(s->backing) : 4096;
		g &= ~(unit - 1);
		/*
		 * the pages of one huge page follow each other (262144 of a 1 GiB
		 * one): remap it once
		 */
		if (i && unit > 4096 && (poisoned->gpas[i - 1] & ~(unit - 1)) == g)
			continue;
		/* a salvaged huge page was remapped above */
		for (j = 0; j < nsalvaged && salvaged[j] != g; j++)
			;
		if (j < nsalvaged)
			continue;
		if (remap_slot_range((struct memslot *)s, unit,
				     s->hva + (g - s->gpa)) == MAP_FAILED) {
			if (huge)
				hugetlb_shortage(s->backing, unit);
			pr_errno("remapping poisoned GPA %#llx", (unsigned long long)g);
			r = -1;
			break;
		}
		report("remap", "\"gpa\":\"%#llx\",\"bytes\":%llu",
		       (unsigned long long)g, (unsigned long long)unit);
	}
	poison_list_free(poisoned);
	return r;
}

int guest_ram_named(void)
{
	return ram_named > 0;
}
