/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Guest RAM in the state stream, one record per 4 KiB page, and never a
 * load from a poisoned page (issue #21, part 3): a page on the VMM's poison
 * list is sent as "poisoned" without being read, and every other page is
 * read by the kernel (a write() of it into a pipe), which refuses a
 * hwpoisoned page with EFAULT where our own load would take SIGBUS
 * BUS_MCEERR_AR: such a page, poisoned without the VMM having heard of it
 * (late kill) or while it was being copied, is sent as "unreadable".
 *
 * A record is a u64: the page's GPA with its kind in the low 12 bits; a
 * data record is followed by the page's 4096 bytes. Records go in RAM
 * sections of up to RAM_SECTION_PAGES data pages.
 */
#ifndef HWLAB_MIGRATE_RAM_H
#define HWLAB_MIGRATE_RAM_H

#include <stdint.h>

#include "core/poison_list.h"

struct vm;
struct stream;

enum ram_page_kind {
	RAM_PAGE_DATA = 0,
	RAM_PAGE_ZERO = 1,		/* all zero: no bytes follow */
	RAM_PAGE_POISONED = 2,		/* on the source's poison list: not read */
	RAM_PAGE_UNREADABLE = 3,	/* the kernel refused to read it: poisoned */
};
#define RAM_PAGE_KINDS		4
#define RAM_SECTION_PAGES	256

struct ram_counts {
	uint64_t pages[RAM_PAGE_KINDS];	/* by kind */
	uint64_t chunks_split;		/* 64 KiB reads that fell back to single pages */
};

struct ram_writer {
	struct stream *s;
	const struct poison_list *known;	/* the VMM's poisoned pages (sorted) */
	uint8_t *buf;
	uint32_t len;
	int pipe[2];
	unsigned int chunk_pages;	/* pages a write() into the pipe takes at most */
	struct ram_counts c;
	/*
	 * Called after each section (about 1 MiB) when set: the caller's
	 * work meanwhile; nonzero stops the copy (ram_writer_flush() fails).
	 */
	int (*tick)(void *arg);
	void *tick_arg;
	/* pages found unreadable, for the caller's report (sorted, unique) */
	struct poison_list unreadable;
};

/* 0, or -1 after a message. known stays the caller's, and must outlive w. */
int ram_writer_init(struct ram_writer *w, struct stream *s, const struct poison_list *known);
/* Every page of [gpa, gpa + len) (inside one slot, page-aligned) as records. */
int ram_send_range(struct ram_writer *w, const struct vm *vm, uint64_t gpa, uint64_t len);
/* All of guest RAM. */
int ram_send_all(struct ram_writer *w, const struct vm *vm);
/* The last, partly filled section. */
int ram_writer_flush(struct ram_writer *w);
void ram_writer_free(struct ram_writer *w);

struct ram_reader {
	struct ram_counts c;
	/* the pages that came poisoned or unreadable (sorted, unique; caller frees) */
	struct poison_list poisoned;
};

/*
 * A RAM section's records into guest memory; a poisoned or unreadable page
 * is only listed (migrate/poison_keep.c keeps it poisoned). A record for a
 * GPA outside RAM, an unknown kind or a cut page refuses the section.
 * 0, or -1 after a message.
 */
int ram_apply_section(struct ram_reader *r, const struct vm *vm, const uint8_t *p, uint32_t len);

#endif
