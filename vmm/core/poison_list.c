// SPDX-License-Identifier: GPL-2.0
#include "core/poison_list.h"

#include <stdlib.h>
#include <string.h>

#define PAGE_MASK_4K (~0xfffULL)

/* Index of the first entry >= gpa. */
static unsigned int lower_bound(const struct poison_list *l, uint64_t gpa)
{
	unsigned int lo = 0, hi = l->count;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (l->gpas[mid] < gpa)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int poison_list_contains(const struct poison_list *l, uint64_t gpa)
{
	unsigned int i = lower_bound(l, gpa & PAGE_MASK_4K);

	return i < l->count && l->gpas[i] == (gpa & PAGE_MASK_4K);
}

static int add_page(struct poison_list *l, uint64_t page)
{
	unsigned int i = lower_bound(l, page);

	if (i < l->count && l->gpas[i] == page)
		return 0;
	if (l->count == l->cap) {
		unsigned int cap = l->cap ? 2 * l->cap : 64;
		uint64_t *n = realloc(l->gpas, cap * sizeof(*n));

		if (!n)
			return -1;
		l->gpas = n;
		l->cap = cap;
	}
	memmove(&l->gpas[i + 1], &l->gpas[i], (l->count - i) * sizeof(*l->gpas));
	l->gpas[i] = page;
	l->count++;
	return 1;
}

int poison_list_add(struct poison_list *l, uint64_t gpa, uint64_t len)
{
	uint64_t page = gpa & PAGE_MASK_4K, end = gpa + len;
	int added = 0;

	for (; page < end; page += 0x1000) {
		int r = add_page(l, page);

		if (r < 0)
			return -1;
		added += r;
	}
	return added;
}

void poison_list_clear(struct poison_list *l)
{
	l->count = 0;
}

void poison_list_free(struct poison_list *l)
{
	free(l->gpas);
	memset(l, 0, sizeof(*l));
}
