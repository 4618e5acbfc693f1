// SPDX-License-Identifier: GPL-2.0
#include "boot/elf_load.h"

#include <elf.h>
#include <stdio.h>
#include <string.h>

#include "hwlab_abi.h"

#define fail(...) do { snprintf(err, errlen, __VA_ARGS__); return -1; } while (0)

/*
 * Where segment i may go: not wrapping around, not over the boot area that
 * x86_boot.c has already written (page tables, GDT, boot info: all below
 * GUEST_LOAD_GPA), and after the previous segment, so that no two overlap
 * (the ELF spec has PT_LOAD entries in ascending order: one comparison each).
 */
static int check_segment_gpa(const Elf64_Phdr *ph, unsigned int i, uint64_t prev_end,
			     unsigned int prev, char *err, size_t errlen)
{
	unsigned long long start = ph->p_paddr, len = ph->p_memsz;

	if (len > UINT64_MAX - start)
		fail("segment %u: GPA %#llx+%#llx wraps around the address space", i, start, len);
	if (start < GUEST_LOAD_GPA)
		fail("segment %u: GPA [%#llx, %#llx) overlaps the boot area below %#llx "
		     "(page tables, GDT, boot info)", i, start, start + len, GUEST_LOAD_GPA);
	if (start < prev_end)
		fail("segment %u: GPA [%#llx, %#llx) overlaps or precedes segment %u, which ends "
		     "at %#llx (PT_LOAD segments must be disjoint and in ascending order)",
		     i, start, start + len, prev, (unsigned long long)prev_end);
	return 0;
}

/*
 * The headers are copied out, not cast in place: e_phoff is whatever the
 * file says, and a program header at an odd offset is a misaligned access
 * (undefined behaviour, which UBSan reports).
 */
int elf_load(const struct memslot_table *t, const uint8_t *image, size_t size,
	     uint64_t *entry, char *err, size_t errlen)
{
	Elf64_Ehdr ehdr, *eh = &ehdr;
	unsigned int i, loaded = 0, prev = 0;
	uint64_t prev_end = 0;

	if (size < sizeof(*eh) || memcmp(image, ELFMAG, SELFMAG))
		fail("not an ELF file");
	memcpy(eh, image, sizeof(*eh));
	if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB)
		fail("not a little-endian ELF64 file");
	if (eh->e_machine != EM_X86_64 || eh->e_type != ET_EXEC)
		fail("not an x86-64 executable (e_machine %u, e_type %u)",
		     eh->e_machine, eh->e_type);
	if (eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phoff > size ||
	    (size - eh->e_phoff) / sizeof(Elf64_Phdr) < eh->e_phnum)
		fail("program header table lies outside the file");

	for (i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr phdr, *ph = &phdr;
		uint8_t *dst;

		memcpy(ph, image + eh->e_phoff + (size_t)i * sizeof(*ph), sizeof(*ph));
		if (ph->p_type != PT_LOAD || ph->p_memsz == 0)
			continue;
		if (ph->p_filesz > ph->p_memsz || ph->p_offset > size ||
		    size - ph->p_offset < ph->p_filesz)
			fail("segment %u: file range %#llx+%#llx lies outside the %zu-byte file",
			     i, (unsigned long long)ph->p_offset,
			     (unsigned long long)ph->p_filesz, size);
		if (check_segment_gpa(ph, i, prev_end, prev, err, errlen))
			return -1;
		dst = memslot_gpa_to_hva(t, ph->p_paddr, ph->p_memsz);
		if (!dst)
			fail("segment %u: GPA %#llx+%#llx is not inside guest RAM",
			     i, (unsigned long long)ph->p_paddr,
			     (unsigned long long)ph->p_memsz);
		memcpy(dst, image + ph->p_offset, ph->p_filesz);
		memset(dst + ph->p_filesz, 0, ph->p_memsz - ph->p_filesz);
		prev_end = ph->p_paddr + ph->p_memsz;
		prev = i;
		loaded++;
	}
	if (!loaded)
		fail("no loadable segment");
	if (!memslot_gpa_to_hva(t, eh->e_entry, 1))
		fail("entry point %#llx is not inside guest RAM", (unsigned long long)eh->e_entry);
	*entry = eh->e_entry;
	return 0;
}
