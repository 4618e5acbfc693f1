/* SPDX-License-Identifier: GPL-2.0 */
/* The guest pages the VMM knows to be poisoned, one entry per 4 KiB page. */
#ifndef HWLAB_POISON_LIST_H
#define HWLAB_POISON_LIST_H

#include <stdint.h>

struct poison_list {
	uint64_t *gpas;		/* sorted, page-aligned, unique */
	unsigned int count;
	unsigned int cap;
};

/*
 * Add every page of [gpa, gpa + len). Returns how many pages were new
 * (0: all already known), or -1 on allocation failure.
 */
int poison_list_add(struct poison_list *l, uint64_t gpa, uint64_t len);
int poison_list_contains(const struct poison_list *l, uint64_t gpa);
void poison_list_clear(struct poison_list *l);
void poison_list_free(struct poison_list *l);

#endif
