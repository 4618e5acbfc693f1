// SPDX-License-Identifier: GPL-2.0
#include <elf.h>
#include <string.h>

#include "boot/elf_load.h"
#include "hwlab_abi.h"
#include "unit.h"

/* Guest RAM from GUEST_LOAD_GPA: below it is the boot area, never loaded into. */
#define RAM_GPA GUEST_LOAD_GPA
static uint8_t ram[64 * 1024];

static size_t make_image(uint8_t *buf, uint64_t paddr, uint64_t filesz, uint64_t memsz)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)buf;
	Elf64_Phdr *ph = (Elf64_Phdr *)(buf + sizeof(*eh));
	size_t off = sizeof(*eh) + 2 * sizeof(*ph);	/* room for add_segment() */

	memset(buf, 0, 4096);
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_type = ET_EXEC;
	eh->e_machine = EM_X86_64;
	eh->e_entry = paddr;
	eh->e_phoff = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);
	eh->e_phnum = 1;
	ph->p_type = PT_LOAD;
	ph->p_offset = off;
	ph->p_paddr = paddr;
	ph->p_filesz = filesz;
	ph->p_memsz = memsz;
	memset(buf + off, 0xaa, filesz);
	return off + filesz;
}

/* A second PT_LOAD segment, all .bss. */
static void add_segment(uint8_t *buf, uint64_t paddr, uint64_t memsz)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)buf;
	Elf64_Phdr *ph = (Elf64_Phdr *)(buf + sizeof(*eh)) + 1;

	eh->e_phnum = 2;
	*ph = (Elf64_Phdr){ .p_type = PT_LOAD, .p_paddr = paddr, .p_memsz = memsz };
}

#define CHECK_REFUSED(n, text)							\
	do {									\
		CHECK_EQ(elf_load(&t, img, n, &entry, err, sizeof(err)), -1);	\
		CHECK(strstr(err, text) != NULL, "%s", err);			\
	} while (0)

UNIT_TEST(elf_load, "guest ELF loader")
{
	struct memslot_table t = { .count = 1 };
	uint8_t img[4096];
	uint64_t entry = 0;
	char err[256];
	size_t n;

	t.slots[0] = (struct memslot){ .gpa = RAM_GPA, .size = sizeof(ram), .hva = ram };

	n = make_image(img, RAM_GPA + 0x1000, 16, 32);
	memset(ram, 0x55, sizeof(ram));
	CHECK_EQ(elf_load(&t, img, n, &entry, err, sizeof(err)), 0);
	CHECK_EQ(entry, RAM_GPA + 0x1000);
	CHECK_EQ(ram[0x1000], 0xaa);
	CHECK_EQ(ram[0x100f], 0xaa);
	CHECK_EQ(ram[0x1010], 0);	/* bss zeroed */
	CHECK_EQ(ram[0x101f], 0);
	CHECK_EQ(ram[0x1020], 0x55);

	CHECK_REFUSED(10, "not an ELF");			/* truncated header */
	CHECK_REFUSED(n - 1, "outside the");			/* truncated segment */

	n = make_image(img, RAM_GPA + sizeof(ram) - 8, 16, 16);	/* past the end of RAM */
	CHECK_REFUSED(n, "not inside guest RAM");

	n = make_image(img, RAM_GPA + 0x1000, 16, 16);
	((Elf64_Ehdr *)img)->e_machine = EM_AARCH64;
	CHECK_REFUSED(n, "x86-64");

	n = make_image(img, RAM_GPA + 0x1000, 16, 16);
	((Elf64_Ehdr *)img)->e_phnum = 200;	/* table beyond the file */
	CHECK_EQ(elf_load(&t, img, n, &entry, err, sizeof(err)), -1);

	n = make_image(img, RAM_GPA + 0x1000, 32, 16);	/* filesz > memsz */
	CHECK_EQ(elf_load(&t, img, n, &entry, err, sizeof(err)), -1);

	n = make_image(img, RAM_GPA + 0x1000, 16, 16);
	((Elf64_Ehdr *)img)->e_entry = 1 << 30;
	CHECK_REFUSED(n, "entry point");

	/* a program header at an odd offset (found by make fuzz: UBSan, misaligned) */
	n = make_image(img, RAM_GPA + 0x1000, 16, 16);
	memmove(img + sizeof(Elf64_Ehdr) + 1, img + sizeof(Elf64_Ehdr), sizeof(Elf64_Phdr));
	((Elf64_Ehdr *)img)->e_phoff = sizeof(Elf64_Ehdr) + 1;
	CHECK_EQ(elf_load(&t, img, n, &entry, err, sizeof(err)), 0);

	/* and the ELF header itself, where the caller's buffer is not aligned */
	memmove(img + 1, img, n);
	CHECK_EQ(elf_load(&t, img + 1, n, &entry, err, sizeof(err)), 0);
	CHECK_EQ(entry, RAM_GPA + 0x1000);

	/*
	 * The boot area: x86_boot.c writes the page tables at 0x1000 before
	 * loading, so a segment there would overwrite them. Refused even when
	 * guest RAM covers it.
	 */
	t.slots[0] = (struct memslot){ .gpa = 0, .size = sizeof(ram), .hva = ram };
	n = make_image(img, 0x1000, 16, 16);
	CHECK_REFUSED(n, "segment 0: GPA [0x1000, 0x1010) overlaps the boot area below 0x100000");
	t.slots[0].gpa = RAM_GPA - 0x1000;	/* the last boot-area page and beyond */
	n = make_image(img, RAM_GPA - 8, 16, 16);
	CHECK_REFUSED(n, "overlaps the boot area");
	t.slots[0].gpa = RAM_GPA;

	/* p_paddr + p_memsz past 2^64: named, not wrapped to a small GPA */
	n = make_image(img, 0xfffffffffffff000ULL, 0, 0x2000);
	CHECK_REFUSED(n, "segment 0: GPA 0xfffffffffffff000+0x2000 wraps around");

	/* two segments: disjoint and ascending loads; overlapping or descending do not */
	n = make_image(img, RAM_GPA, 16, 0x1000);
	add_segment(img, RAM_GPA + 0x1000, 0x1000);
	CHECK_EQ(elf_load(&t, img, n, &entry, err, sizeof(err)), 0);
	add_segment(img, RAM_GPA + 0xfff, 0x1000);
	CHECK_REFUSED(n, "segment 1: GPA [0x100fff, 0x101fff) overlaps or precedes segment 0");
	n = make_image(img, RAM_GPA + 0x2000, 16, 0x1000);
	add_segment(img, RAM_GPA, 0x1000);
	CHECK_REFUSED(n, "segment 1: GPA [0x100000, 0x101000) overlaps or precedes segment 0");
}
