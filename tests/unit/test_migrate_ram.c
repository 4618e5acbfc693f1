// SPDX-License-Identifier: GPL-2.0
/*
 * Guest RAM in the state stream (vmm/migrate/ram.c), on memory of the
 * test's own: data and zero pages come back as written; a page on the
 * poison list is sent "poisoned" without being read; a page the kernel
 * refuses to read is sent "unreadable". A PROT_NONE page stands in for a
 * hwpoisoned one: write() from either fails with EFAULT where a load would
 * fault (poisoning a page is for the outer VM only), and if the copy read
 * it with a load this test would die of SIGSEGV.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/vm.h"
#include "migrate/ram.h"
#include "migrate/stream.h"
#include "unit.h"

#define PAGES	40
#define PG	4096

static void vm_over(struct vm *vm, uint8_t *mem)
{
	memset(vm, 0, sizeof(*vm));
	vm->mem.count = 1;
	vm->mem.slots[0] = (struct memslot) { .gpa = 0x100000, .size = PAGES * PG, .hva = mem };
}

/*
 * The last page of a 16-page chunk unreadable, twice in a row: on 6.1 a
 * faulting pipe_write() left an empty slot in the ring, and the next full
 * chunk blocked in write() for ever (the copy now makes a new pipe). Not
 * seen on a later host kernel; the outer VM's scenarios run on 6.1.
 */
UNIT_TEST(migrate_ram_chunk_end, "RAM copy: a chunk's last page unreadable, then full chunks")
{
	static struct vm src;
	struct poison_list known = { 0 };
	uint8_t *a = mmap(NULL, PAGES * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int fd = memfd_create("ram", MFD_CLOEXEC);
	struct ram_writer w;
	struct stream s;
	unsigned int i;

	UNIT_REQUIRE(a != MAP_FAILED && fd >= 0, "memory");
	for (i = 0; i < PAGES; i++)
		memset(a + i * PG, 'a' + i, PG);
	CHECK_EQ(mprotect(a + 15 * PG, PG, PROT_NONE), 0);
	CHECK_EQ(mprotect(a + 31 * PG, PG, PROT_NONE), 0);
	vm_over(&src, a);
	CHECK_EQ(stream_out_open(&s, fd, "memfd"), 0);
	CHECK_EQ(ram_writer_init(&w, &s, &known), 0);
	CHECK_EQ(ram_send_all(&w, &src), 0);
	CHECK_EQ(w.c.pages[RAM_PAGE_UNREADABLE], 2);
	CHECK_EQ(w.c.pages[RAM_PAGE_DATA], PAGES - 2);
	ram_writer_free(&w);
	munmap(a, PAGES * PG);
	close(fd);
}

UNIT_TEST(migrate_ram, "RAM copy: data, zero, poisoned (not read) and unreadable (EFAULT) pages")
{
	static struct vm src, dst;
	struct poison_list known = { 0 };
	uint8_t *a = mmap(NULL, PAGES * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *b = mmap(NULL, PAGES * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *buf = malloc(STREAM_SECTION_MAX);
	int fd = memfd_create("ram", MFD_CLOEXEC);
	struct ram_reader rr = { 0 };
	struct ram_writer w;
	enum stream_section type;
	struct stream s;
	unsigned int i, same = 0;
	uint32_t len;

	UNIT_REQUIRE(a != MAP_FAILED && b != MAP_FAILED && buf && fd >= 0, "memory");
	for (i = 0; i < PAGES; i++)
		if (i % 3)	/* every third page stays zero */
			memset(a + i * PG, 'a' + i, PG);
	/* page 5 known poisoned and unreadable: proves it is not read (it would be "unreadable") */
	CHECK_EQ(mprotect(a + 5 * PG, PG, PROT_NONE), 0);
	poison_list_add(&known, 0x100000 + 5 * PG, PG);
	/* page 17 and 18: unreadable, unknown (poisoned since the VMM last looked) */
	CHECK_EQ(mprotect(a + 17 * PG, 2 * PG, PROT_NONE), 0);
	/* and one page known poisoned that is readable: still not sent as data */
	poison_list_add(&known, 0x100000 + 30 * PG, PG);
	vm_over(&src, a);
	vm_over(&dst, b);
	memset(b + 7 * PG, 0xee, PG);	/* what boot left where the guest has zeros */

	CHECK_EQ(stream_out_open(&s, fd, "memfd"), 0);
	CHECK_EQ(ram_writer_init(&w, &s, &known), 0);
	CHECK_EQ(ram_send_all(&w, &src), 0);
	CHECK_EQ(w.c.pages[RAM_PAGE_POISONED], 2);
	CHECK_EQ(w.c.pages[RAM_PAGE_UNREADABLE], 2);
	CHECK_EQ(w.c.pages[RAM_PAGE_ZERO], 12);	/* 0, 3, ..., 39 (14) but 18 (unreadable) and 30 (poisoned) */
	CHECK_EQ(w.c.pages[RAM_PAGE_DATA], PAGES - 2 - 2 - 12);
	CHECK(w.c.chunks_split >= 1, "the chunk with 17 and 18 fell back to single pages");
	CHECK_EQ(w.unreadable.count, 2);
	ram_writer_free(&w);
	CHECK_EQ(stream_out_close(&s), 0);

	CHECK_EQ((int)lseek(fd, 0, SEEK_SET), 0);
	CHECK_EQ(stream_in_open(&s, fd, "memfd"), 0);
	for (;;) {
		UNIT_REQUIRE(stream_get(&s, &type, buf, &len) == 0, "a section");
		if (type == STREAM_END)
			break;
		CHECK_EQ(type, STREAM_RAM);
		CHECK_EQ(ram_apply_section(&rr, &dst, buf, len), 0);
	}
	CHECK_EQ(rr.poisoned.count, 4);
	CHECK_EQ(rr.poisoned.gpas[0], 0x100000 + 5 * PG);
	CHECK_EQ(rr.poisoned.gpas[3], 0x100000 + 30 * PG);
	for (i = 0; i < PAGES; i++)
		if (i != 5 && i != 17 && i != 18 && i != 30)
			same += !memcmp(a + i * PG, b + i * PG, PG);
	CHECK_EQ(same, PAGES - 4);

	/* a record for a GPA outside RAM, or of no kind, refuses the section */
	{
		uint64_t bad = (0x100000 + PAGES * PG) | RAM_PAGE_ZERO;

		CHECK_EQ(ram_apply_section(&rr, &dst, (uint8_t *)&bad, sizeof(bad)), -1);
		bad = 0x100000 | 7;
		CHECK_EQ(ram_apply_section(&rr, &dst, (uint8_t *)&bad, sizeof(bad)), -1);
		bad = 0x100000 | RAM_PAGE_DATA;	/* its page missing */
		CHECK_EQ(ram_apply_section(&rr, &dst, (uint8_t *)&bad, sizeof(bad)), -1);
	}
	poison_list_free(&rr.poisoned);
	poison_list_free(&known);
	munmap(a, PAGES * PG);
	munmap(b, PAGES * PG);
	free(buf);
	close(fd);
}
