// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include "core/memslot.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

int memslot_translate(const struct memslot_table *t, uintptr_t hva, unsigned int lsb,
		      struct gpa_extent *out)
{
	unsigned int i;

	if (lsb < 12 || lsb > 63)
		return -1;
	for (i = 0; i < t->count; i++) {
		const struct memslot *s = &t->slots[i];
		uintptr_t start = (uintptr_t)s->hva, end = start + s->size;
		uintptr_t granule = lsb >= 8 * sizeof(uintptr_t) - 1 ? UINTPTR_MAX :
				    ((uintptr_t)1 << lsb) - 1;
		uintptr_t lo, hi;

		if (hva < start || hva >= end)
			continue;
		lo = hva & ~granule;
		hi = lo + granule;	/* last byte of the granule; may wrap */
		if (lo < start)
			lo = start;
		if (hi < lo || hi >= end)
			hi = end - 1;
		out->slot = s;
		out->gpa = s->gpa + (lo - start);
		out->len = hi - lo + 1;
		return 0;
	}
	return -1;
}

const struct memslot *memslot_find_gpa(const struct memslot_table *t, uint64_t gpa)
{
	unsigned int i;

	for (i = 0; i < t->count; i++)
		if (gpa >= t->slots[i].gpa && gpa - t->slots[i].gpa < t->slots[i].size)
			return &t->slots[i];
	return NULL;
}

void *memslot_gpa_to_hva(const struct memslot_table *t, uint64_t gpa, uint64_t len)
{
	unsigned int i;

	for (i = 0; i < t->count; i++) {
		const struct memslot *s = &t->slots[i];

		if (gpa >= s->gpa && len <= s->size && gpa - s->gpa <= s->size - len)
			return s->hva + (gpa - s->gpa);
	}
	return NULL;
}

enum memslot_copy memslot_copy_out(const struct memslot_table *t, uint64_t gpa, void *dst,
				   size_t len)
{
	void *src = memslot_gpa_to_hva(t, gpa, len);
	enum memslot_copy r = MEMSLOT_UNREADABLE;
	int p[2];

	if (!src)
		return MEMSLOT_NOT_IN_RAM;
	/*
	 * Through a pipe: the kernel's copy_from_user() of a poisoned page
	 * fails with EFAULT (a short write) instead of signalling, and pipes
	 * are in every kernel (process_vm_readv() needs CROSS_MEMORY_ATTACH,
	 * which the outer kernel does not have). A pipe per call: vCPU threads
	 * decode at the same time. len must fit the pipe (64 KiB).
	 */
	if (len > 65536 || pipe2(p, O_CLOEXEC))
		return MEMSLOT_UNREADABLE;
	if (write(p[1], src, len) == (ssize_t)len && read(p[0], dst, len) == (ssize_t)len)
		r = MEMSLOT_COPIED;
	close(p[0]);
	close(p[1]);
	return r;
}

const char *memslot_backing_name(enum memslot_backing b)
{
	switch (b) {
	case BACKING_ANON:
		return "anon";
	case BACKING_THP:
		return "thp";
	case BACKING_HUGETLB:
		return "hugetlb";
	case BACKING_HUGETLB_1G:
		return "hugetlb-1g";
	case BACKING_HUGETLB_SHARED:
		return "hugetlb-shared";
	case BACKING_SHMEM:
		return "shmem";
	}
	return "?";
}

int memslot_backing_is_hugetlb(enum memslot_backing b)
{
	return b == BACKING_HUGETLB || b == BACKING_HUGETLB_1G || b == BACKING_HUGETLB_SHARED;
}

int memslot_backing_is_shared_file(enum memslot_backing b)
{
	return b == BACKING_HUGETLB_SHARED || b == BACKING_SHMEM;
}

uint64_t memslot_backing_page_size(enum memslot_backing b)
{
	switch (b) {
	case BACKING_HUGETLB:
	case BACKING_HUGETLB_SHARED:
		return 2ULL << 20;
	case BACKING_HUGETLB_1G:
		return 1ULL << 30;
	default:
		return 4096;
	}
}

int memslot_write(const struct memslot_table *t, uint64_t gpa, const void *src, uint64_t len)
{
	const uint8_t *p = src;

	while (len) {
		const struct memslot *s = memslot_find_gpa(t, gpa);
		uint64_t n;

		if (!s)
			return -1;
		n = s->size - (gpa - s->gpa);
		if (n > len)
			n = len;
		memcpy(s->hva + (gpa - s->gpa), p, n);
		p += n;
		gpa += n;
		len -= n;
	}
	return 0;
}
