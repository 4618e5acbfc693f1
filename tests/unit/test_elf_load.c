// SPDX-License-Identifier: GPL-2.0
#include <elf.h>
#include <string.h>

#include "elf_load.h"
#include "unit.h"

static uint8_t ram[64 * 1024];

static size_t make_image(uint8_t *buf, uint64_t paddr, uint64_t filesz, uint64_t memsz)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)buf;
	Elf64_Phdr *ph = (Elf64_Phdr *)(buf + sizeof(*eh));
	size_t off = sizeof(*eh) + sizeof(*ph);

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

void test_elf_load(void)
{
	struct memslot_table t = { .count = 1 };
	uint8_t img[4096];
	uint64_t entry = 0;
	char err[256];
	size_t n;

	t.slots[0] = (struct memslot){ .gpa = 0, .size = sizeof(ram), .hva = ram };

	n = make_image(img, 0x1000, 16, 32);
	memset(ram, 0x55, sizeof(ram));
	CHECK_EQ(elf_load(&t, img, n, &entry, err, sizeof(err)), 0);
	CHECK_EQ(entry, 0x1000);
	CHECK_EQ(ram[0x1000], 0xaa);
	CHECK_EQ(ram[0x100f], 0xaa);
	CHECK_EQ(ram[0x1010], 0);	/* bss zeroed */
	CHECK_EQ(ram[0x101f], 0);
	CHECK_EQ(ram[0x1020], 0x55);

	CHECK_EQ(elf_load(&t, img, 10, &entry, err, sizeof(err)), -1);	/* truncated header */
	CHECK(strstr(err, "not an ELF") != NULL, "%s", err);
	CHECK_EQ(elf_load(&t, img, n - 1, &entry, err, sizeof(err)), -1);	/* truncated segment */
	CHECK(strstr(err, "outside the") != NULL, "%s", err);

	n = make_image(img, sizeof(ram) - 8, 16, 16);	/* past the end of RAM */
	CHECK_EQ(elf_load(&t, img, n, &entry, err, sizeof(err)), -1);
	CHECK(strstr(err, "not inside guest RAM") != NULL, "%s", err);

	n = make_image(img, 0x1000, 16, 16);
	((Elf64_Ehdr *)img)->e_machine = EM_AARCH64;
	CHECK_EQ(elf_load(&t, img, n, &entry, err, sizeof(err)), -1);
	CHECK(strstr(err, "x86-64") != NULL, "%s", err);

	n = make_image(img, 0x1000, 16, 16);
	((Elf64_Ehdr *)img)->e_phnum = 200;	/* table beyond the file */
	CHECK_EQ(elf_load(&t, img, n, &entry, err, sizeof(err)), -1);

	n = make_image(img, 0x1000, 32, 16);	/* filesz > memsz */
	CHECK_EQ(elf_load(&t, img, n, &entry, err, sizeof(err)), -1);

	n = make_image(img, 0x1000, 16, 16);
	((Elf64_Ehdr *)img)->e_entry = 1 << 30;
	CHECK_EQ(elf_load(&t, img, n, &entry, err, sizeof(err)), -1);
	CHECK(strstr(err, "entry point") != NULL, "%s", err);
}
