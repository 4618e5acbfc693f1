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

int poison_list_remove(struct poison_list *l, uint64_t gpa)
{
	unsigned int i;

	gpa &= PAGE_MASK_4K;
	i = lower_bound(l, gpa);
	if (i == l->count || l->gpas[i] != gpa)
		return 0;
	memmove(&l->gpas[i], &l->gpas[i + 1], (l->count - i - 1) * sizeof(l->gpas[0]));
	l->count--;
	return 1;
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

void guest_poison_init(struct guest_poison *g)
{
	pthread_mutex_init(&g->lock, NULL);
}

int guest_poison_add(struct guest_poison *g, uint64_t gpa, uint64_t len)
{
	int added;

	pthread_mutex_lock(&g->lock);
	added = poison_list_add(&g->pages, gpa, len);
	pthread_mutex_unlock(&g->lock);
	return added;
}

int guest_poison_contains(struct guest_poison *g, uint64_t gpa)
{
	int r;

	pthread_mutex_lock(&g->lock);
	r = poison_list_contains(&g->pages, gpa);
	pthread_mutex_unlock(&g->lock);
	return r;
}

unsigned int guest_poison_count(struct guest_poison *g)
{
	unsigned int n;

	pthread_mutex_lock(&g->lock);
	n = g->pages.count;
	pthread_mutex_unlock(&g->lock);
	return n;
}

void guest_poison_take(struct guest_poison *g, struct poison_list *out)
{
	pthread_mutex_lock(&g->lock);
	*out = g->pages;
	memset(&g->pages, 0, sizeof(g->pages));
	pthread_mutex_unlock(&g->lock);
}

int poison_list_copy(const struct poison_list *src, struct poison_list *out)
{
	*out = (struct poison_list) { 0 };
	if (!src->count)
		return 0;
	out->gpas = malloc(src->count * sizeof(out->gpas[0]));
	if (!out->gpas)
		return -1;
	memcpy(out->gpas, src->gpas, src->count * sizeof(out->gpas[0]));
	out->count = out->cap = src->count;
	return 0;
}

int guest_poison_copy(struct guest_poison *g, struct poison_list *out)
{
	int r;

	pthread_mutex_lock(&g->lock);
	r = poison_list_copy(&g->pages, out);
	pthread_mutex_unlock(&g->lock);
	return r;
}
