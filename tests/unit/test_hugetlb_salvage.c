// SPDX-License-Identifier: GPL-2.0
/*
 * The salvage of a lost huge page (vmm/core/hugetlb_salvage.c) on a tmpfs memfd
 * standing in for the hugetlbfs one: the read() of a poisoned subpage and
 * the poison marker are faked (nothing may poison the machine the unit
 * tests run on); the scratch mapping, the copy, the mremap() over guest RAM
 * and the bookkeeping are the VMM's own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/guest_ram.h"
#include "core/hugetlb_salvage.h"
#include "unit.h"

#define MiB (1ULL << 20)

static uint64_t eio_mask[SALVAGE_PAGES / 64];	/* subpages whose read() fails */
static int all_eio, fail_poison;
static unsigned int reads, poisoned;
static uintptr_t poisoned_at[4];
static uint64_t poisoned_gpa[4];	/* the GPA the marker was said to be for */

static int bad_subpage(uint64_t i)
{
	return all_eio || ((eio_mask[i / 64] >> (i % 64)) & 1);
}

/* as hugetlbfs_read_iter() with 0010: up to the next bad subpage, EIO on one */
static ssize_t fake_read(int fd, void *buf, size_t len, off_t off)
{
	uint64_t i = (uint64_t)(off % SALVAGE_UNIT) / 4096, n;

	reads++;
	if (bad_subpage(i)) {
		errno = EIO;
		return -1;
	}
	for (n = 1; n * 4096 < len && i + n < SALVAGE_PAGES && !bad_subpage(i + n); n++)
		;
	return pread(fd, buf, n * 4096 < len ? n * 4096 : len, off);
}

/* pagemap's "exclusively mapped" bit: a private page of its own, not the zero page */
static int mapped_exclusively(const void *page)
{
	uint64_t e = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : pread(fd, &e, 8, (off_t)((uintptr_t)page / 4096 * 8));

	if (fd >= 0)
		close(fd);
	return n == 8 && (e >> 63 & 1) && (e >> 56 & 1);
}

static int fake_poison(void *page, uint64_t gpa)
{
	const uint8_t *b = page;
	size_t i;

	if (fail_poison) {
		errno = EPERM;
		return -1;
	}
	/* the salvage stored to it first: a page of its own, not the zero page */
	if (!mapped_exclusively(page))
		return -1;
	for (i = 0; i < 4096; i++)
		if (b[i])
			return -1;
	if (poisoned < 4) {
		poisoned_at[poisoned] = (uintptr_t)page;
		poisoned_gpa[poisoned] = gpa;
	}
	poisoned++;
	return 0;
}

static int pattern_of(uint64_t i)
{
	return (int)(1 + i % 251);
}

/* 4 MiB of "guest RAM": a memfd mapped shared, 2 MiB aligned, filled with a pattern */
static uint8_t *make_ram(int fd)
{
	uint8_t *p = mmap(NULL, 6 * MiB, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *at = (uint8_t *)(((uintptr_t)p + 2 * MiB - 1) & ~(2 * MiB - 1));
	uint64_t i;

	if (ftruncate(fd, 4 * MiB) ||
	    mmap(at, 4 * MiB, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) != at)
		return NULL;
	for (i = 0; i < 4 * MiB; i += 4096)
		memset(at + i, pattern_of(i / 4096), 4096);
	return at;
}

/* whether RAM at hva is the memfd: a store there shows in the file */
static int backed_by_file(int fd, uint8_t *hva, off_t off)
{
	uint8_t old = *hva, seen = 0;

	*hva = 0xee;
	if (pread(fd, &seen, 1, off) != 1)
		return -1;
	*hva = old;
	return seen == 0xee;
}

UNIT_TEST(hugetlb_salvage, "a lost huge page salvaged: 4 KiB lost, not 2 MiB")
{
	static const struct salvage_ops fake = { fake_read, fake_poison };
	int fd = memfd_create("unit-salvage", MFD_CLOEXEC);
	struct memslot s = { .id = 0, .gpa = 0x40000000, .size = 4 * MiB,
			     .backing = BACKING_HUGETLB_SHARED, .fd = fd };
	struct salvage_result r;
	unsigned int before;
	int ok = 1;
	uint64_t i;

	s.hva = fd < 0 ? NULL : make_ram(fd);
	CHECK(s.hva != NULL, "memfd RAM for the test");
	if (!s.hva)
		return;
	hugetlb_salvage_set_ops(&fake);
	hugetlb_salvage_forget();

	/* subpages 3 and 500 of the second huge page are bad; the rest is read back */
	eio_mask[0] = 1ULL << 3;
	eio_mask[500 / 64] = 1ULL << (500 % 64);
	CHECK_EQ(hugetlb_salvage_possible(&s), 1);
	CHECK_EQ(hugetlb_salvage(&s, s.gpa + 2 * MiB + 0x5123, &r), 0);
	CHECK_EQ(r.status, SALVAGE_DONE);
	CHECK_EQ(r.gpa, s.gpa + 2 * MiB);
	CHECK_EQ(r.bad, 2);
	CHECK_EQ(poisoned, 2);
	/* a read to each bad subpage, its EIO, and the rest: 5, not 512 */
	CHECK_EQ(reads, 5);
	CHECK_EQ(hugetlb_salvage_page_bad(&r, r.gpa + 3 * 4096), 1);
	CHECK_EQ(hugetlb_salvage_page_bad(&r, r.gpa + 500 * 4096 + 17), 1);
	CHECK_EQ(hugetlb_salvage_page_bad(&r, r.gpa + 4 * 4096), 0);
	CHECK_EQ(hugetlb_salvage_page_bad(&r, r.gpa - 4096), 0);
	CHECK_EQ(hugetlb_salvage_page_bad(&r, r.gpa + 2 * MiB), 0);
	/* every healthy subpage holds its data, at its address, no longer the file */
	for (i = 0; i < SALVAGE_PAGES; i++) {
		uint8_t *page = s.hva + 2 * MiB + i * 4096;
		int want = i == 3 || i == 500 ? 0 : (int)(1 + (512 + i) % 251);

		ok &= page[0] == want && page[4095] == want;
	}
	CHECK(ok, "healthy subpages read back in place, the bad ones fresh");
	CHECK_EQ(backed_by_file(fd, s.hva + 2 * MiB + 4096, 2 * MiB + 4096), 0);
	/* the first huge page was not touched */
	CHECK_EQ(backed_by_file(fd, s.hva + 4096, 4096), 1);
	/* the markers were made in the scratch, before the move: their AOs name it */
	CHECK_EQ(hugetlb_salvage_marker_gpa(poisoned_at[0]), r.gpa + 3 * 4096);
	CHECK_EQ(hugetlb_salvage_marker_gpa(poisoned_at[1] + 12), r.gpa + 500 * 4096);
	/* the SIGBUS layer's marker names the page by the GPA it is moved to */
	CHECK_EQ(poisoned_gpa[0], r.gpa + 3 * 4096);
	CHECK_EQ(poisoned_gpa[1], r.gpa + 500 * 4096);
	CHECK_EQ(hugetlb_salvage_marker_gpa((uintptr_t)s.hva), 0);

	/* a second call (another vCPU's AR, the AO) gets the first one's result */
	before = reads;
	CHECK_EQ(hugetlb_salvage(&s, s.gpa + 2 * MiB, &r), 0);
	CHECK_EQ(reads, before);
	CHECK_EQ(r.bad, 2);

	/* a reset takes the salvaged huge pages back, to map the file there again */
	{
		uint64_t gpas[4];

		CHECK_EQ(hugetlb_salvage_take(gpas, 4), 1);
		CHECK_EQ(gpas[0], s.gpa + 2 * MiB);
		CHECK_EQ(hugetlb_salvage_take(gpas, 4), 0);
		CHECK_EQ(hugetlb_salvage_marker_gpa(poisoned_at[0]), 0);
	}

	/*
	 * Two salvages in a row: the second one's scratch may sit where the
	 * first one's was before its move. Its markers' AOs must name its own
	 * GPAs, not the first one's.
	 */
	memset(eio_mask, 0, sizeof(eio_mask));
	eio_mask[0] = 1ULL << 9;
	poisoned = 0;
	CHECK_EQ(hugetlb_salvage(&s, s.gpa + 2 * MiB, &r), 0);
	eio_mask[0] = 1ULL << 7;
	CHECK_EQ(hugetlb_salvage(&s, s.gpa, &r), 0);
	CHECK_EQ(poisoned, 2);
	CHECK_EQ(hugetlb_salvage_marker_gpa(poisoned_at[1]), s.gpa + 7 * 4096);
	CHECK_EQ(s.hva[7 * 4096], 0);
	CHECK_EQ(s.hva[8 * 4096], pattern_of(8));
	/* a reset maps the file back there (guest_ram_remap_poisoned) */
	{
		uint64_t gpas[4];

		CHECK_EQ(hugetlb_salvage_take(gpas, 4), 2);
		CHECK(guest_ram_map_file(&s, s.hva, 2 * MiB) == s.hva, "the file mapped back");
		CHECK(guest_ram_map_file(&s, s.hva + 2 * MiB, 2 * MiB) == s.hva + 2 * MiB,
		      "the file mapped back");
		CHECK_EQ(backed_by_file(fd, s.hva + 4096, 4096), 1);
		CHECK_EQ(backed_by_file(fd, s.hva + 2 * MiB + 4096, 2 * MiB + 4096), 1);
	}
	memset(eio_mask, 0, sizeof(eio_mask));

	/* a kernel without 38c1ddbde6c6: every read fails, nothing is replaced */
	all_eio = 1;
	CHECK_EQ(hugetlb_salvage(&s, s.gpa, &r), -1);
	CHECK_EQ(r.status, SALVAGE_UNAVAILABLE);
	CHECK(strstr(r.why, "38c1ddbde6c6") != NULL, "names the kernel change: %s", r.why);
	CHECK_EQ(backed_by_file(fd, s.hva + 4096, 4096), 1);
	all_eio = 0;

	/* no poison marker (no CAP_SYS_ADMIN): nothing is replaced, the reason is given */
	hugetlb_salvage_forget();
	eio_mask[0] = 1ULL << 3;
	fail_poison = 1;
	CHECK_EQ(hugetlb_salvage(&s, s.gpa, &r), -1);
	CHECK_EQ(r.status, SALVAGE_FAILED);
	CHECK(strstr(r.why, "MADV_HWPOISON") != NULL, "says why: %s", r.why);
	CHECK_EQ(backed_by_file(fd, s.hva + 4096, 4096), 1);
	fail_poison = 0;

	/* RAM that is not a shared hugetlb memfd is never salvaged */
	hugetlb_salvage_forget();
	s.backing = BACKING_HUGETLB;
	CHECK_EQ(hugetlb_salvage_possible(&s), 0);
	CHECK_EQ(hugetlb_salvage(&s, s.gpa, &r), -1);
	CHECK_EQ(r.status, SALVAGE_UNAVAILABLE);
	CHECK_EQ(backed_by_file(fd, s.hva + 4096, 4096), 1);

	hugetlb_salvage_forget();
	munmap(s.hva, 4 * MiB);
	close(fd);
}
