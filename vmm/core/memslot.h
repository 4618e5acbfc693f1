/* SPDX-License-Identifier: GPL-2.0 */
/* Guest RAM regions and the HVA <-> GPA translation over them. */
#ifndef HWLAB_MEMSLOT_H
#define HWLAB_MEMSLOT_H

#include <stddef.h>
#include <stdint.h>

#define MAX_MEMSLOTS 8

enum memslot_backing {
	BACKING_ANON,		/* private anonymous 4 KiB pages */
	BACKING_THP,		/* anonymous, madvise(MADV_HUGEPAGE) */
	BACKING_HUGETLB,	/* MAP_HUGETLB 2 MiB pages */
	BACKING_HUGETLB_1G,	/* MAP_HUGETLB | MAP_HUGE_1GB: 1 GiB pages */
	/*
	 * 2 MiB pages of a hugetlbfs memfd, mapped shared: the VMM can read
	 * the healthy rest of a poisoned huge page back (hugetlb_salvage.h)
	 */
	BACKING_HUGETLB_SHARED,
	/*
	 * 4 KiB pages of a memfd (tmpfs), mapped shared, as QEMU's
	 * memory-backend-memfd: a poisoned page stays in the file until the
	 * VMM punches it out (guest_ram.c)
	 */
	BACKING_SHMEM,
};

struct memslot {
	uint32_t id;
	uint64_t gpa;
	uint64_t size;
	uint8_t *hva;
	enum memslot_backing backing;
	int fd;			/* a shared backing's memfd, hva at offset 0; else -1 */
};

struct memslot_table {
	struct memslot slots[MAX_MEMSLOTS];
	unsigned int count;
};

/* A poisoned extent of guest memory, clipped to the slot that holds it. */
struct gpa_extent {
	const struct memslot *slot;
	uint64_t gpa;		/* first byte, aligned to the poison granule */
	uint64_t len;		/* bytes; a multiple of 4 KiB */
};

/*
 * Translate a SIGBUS address and its si_addr_lsb into the guest-physical
 * extent it poisons. The kernel reports the start of the poisoned granule
 * (1 << lsb bytes, e.g. 2 MiB for a huge page); the extent is aligned down to
 * that granule and clipped to the slot. Returns 0, or -1 if no slot holds
 * hva or lsb is outside [12, 63].
 * Async-signal-safe: no allocation, no locks.
 */
int memslot_translate(const struct memslot_table *t, uintptr_t hva, unsigned int lsb,
		      struct gpa_extent *out);

/* The slot that holds gpa, or NULL. */
const struct memslot *memslot_find_gpa(const struct memslot_table *t, uint64_t gpa);
/* GPA -> HVA for [gpa, gpa + len) inside one slot, or NULL. */
void *memslot_gpa_to_hva(const struct memslot_table *t, uint64_t gpa, uint64_t len);

/* Copy len bytes to gpa, across slots; -1 (nothing said) if a byte is not in RAM. */
int memslot_write(const struct memslot_table *t, uint64_t gpa, const void *src, uint64_t len);

/*
 * Copy [gpa, gpa + len) of guest RAM (len <= 64 KiB) into dst without
 * touching it with a load: the kernel copies it (through a pipe) and reports
 * a poisoned page as an error, where memcpy() would take SIGBUS
 * BUS_MCEERR_AR and end the VMM.
 * For what a guest hands over (a ucall may point at a page it was told is
 * poisoned, or at one the VMM has not heard of yet).
 */
enum memslot_copy { MEMSLOT_COPIED, MEMSLOT_NOT_IN_RAM, MEMSLOT_UNREADABLE };
enum memslot_copy memslot_copy_out(const struct memslot_table *t, uint64_t gpa, void *dst,
				   size_t len);

const char *memslot_backing_name(enum memslot_backing b);
/* Whether b is hugetlb (2 MiB or 1 GiB pages): reserved at mmap, lost whole. */
int memslot_backing_is_hugetlb(enum memslot_backing b);
/*
 * Whether b is a memfd mapped shared (hugetlb-shared, shmem): the file holds
 * the guest's data, and a poisoned page leaves it only when punched out.
 */
int memslot_backing_is_shared_file(enum memslot_backing b);
/*
 * The unit in which b's memory is mapped and, when poisoned, lost and
 * remapped: its hugetlb page size, else 4 KiB (a THP is split and loses one
 * page).
 */
uint64_t memslot_backing_page_size(enum memslot_backing b);

#endif
