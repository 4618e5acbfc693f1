/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Lists of guest pages, one entry per 4 KiB page; and guest memory's own
 * one, struct guest_poison: every page the kernel reported poisoned, which
 * a reset gives fresh memory (guest_ram_remap_poisoned()). As QEMU keeps it
 * in its generic KVM layer (kvm_hwpoison_page_add, kvm_unpoison_all): the
 * SIGBUS path adds to it, memory remaps from it, and the MCE policy above
 * keeps only what it told the guest.
 */
#ifndef HWLAB_POISON_LIST_H
#define HWLAB_POISON_LIST_H

#include <pthread.h>
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
/* Take gpa's page out; 1 if it was there. */
int poison_list_remove(struct poison_list *l, uint64_t gpa);
void poison_list_clear(struct poison_list *l);
/* A copy of src into *out (empty first; caller frees). 0, or -1 on allocation failure. */
int poison_list_copy(const struct poison_list *src, struct poison_list *out);
void poison_list_free(struct poison_list *l);

/* Per VM: the monitor and the vCPU threads add, the reset takes. */
struct guest_poison {
	pthread_mutex_t lock;		/* guards pages */
	struct poison_list pages;
};

void guest_poison_init(struct guest_poison *g);
/* Pages of [gpa, gpa + len) not known before, as poison_list_add(). */
int guest_poison_add(struct guest_poison *g, uint64_t gpa, uint64_t len);
int guest_poison_contains(struct guest_poison *g, uint64_t gpa);
unsigned int guest_poison_count(struct guest_poison *g);
/* A copy of the list now, for a snapshot (poison_list_copy()). */
int guest_poison_copy(struct guest_poison *g, struct poison_list *out);
/*
 * Reset: move the list to *out (sorted: walk out->gpas; caller frees with
 * poison_list_free()) and start empty.
 */
void guest_poison_take(struct guest_poison *g, struct poison_list *out);

#endif
