// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include "migrate/ram.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/vm.h"
#include "hwlab_abi.h"
#include "log.h"
#include "migrate/stream.h"

#define PAGE		GUEST_PAGE_SIZE
/* A pipe holds 16 pages by default: one write() of a chunk never blocks */
#define CHUNK_PAGES	16
#define KIND_MASK	0xfffULL
#define SECTION_CAP	(RAM_SECTION_PAGES * (PAGE + 8) + CHUNK_PAGES * (PAGE + 8))

/*
 * A new pipe holding a chunk: a write() of CHUNK_PAGES pages must never
 * block on a full pipe with nobody reading (a user over
 * pipe-user-pages-soft gets a 2-page pipe; then chunks are that small).
 */
static int pipe_open(struct ram_writer *w)
{
	int size;

	if (pipe2(w->pipe, O_CLOEXEC)) {
		w->pipe[0] = w->pipe[1] = -1;
		return -1;
	}
	size = fcntl(w->pipe[1], F_GETPIPE_SZ);
	if (size < (int)(CHUNK_PAGES * PAGE))
		size = fcntl(w->pipe[1], F_SETPIPE_SZ, CHUNK_PAGES * PAGE);
	if (size < (int)(CHUNK_PAGES * PAGE))
		size = fcntl(w->pipe[1], F_GETPIPE_SZ);
	w->chunk_pages = size >= (int)(CHUNK_PAGES * PAGE) ? CHUNK_PAGES :
			 size >= (int)PAGE ? (unsigned int)(size / PAGE) : 1;
	return 0;
}

static void pipe_close(struct ram_writer *w)
{
	if (w->pipe[0] >= 0)
		close(w->pipe[0]);
	if (w->pipe[1] >= 0)
		close(w->pipe[1]);
	w->pipe[0] = w->pipe[1] = -1;
}

int ram_writer_init(struct ram_writer *w, struct stream *s, const struct poison_list *known)
{
	*w = (struct ram_writer) { .s = s, .known = known, .pipe = { -1, -1 } };
	w->buf = malloc(SECTION_CAP);
	if (!w->buf || pipe_open(w)) {
		pr_errno("setting up the RAM copy");
		free(w->buf);
		return -1;
	}
	return 0;
}

void ram_writer_free(struct ram_writer *w)
{
	free(w->buf);
	pipe_close(w);
	poison_list_free(&w->unreadable);
	w->buf = NULL;
}

int ram_writer_flush(struct ram_writer *w)
{
	int r = w->len ? stream_put(w->s, STREAM_RAM, w->buf, w->len) : 0;

	w->len = 0;
	/* the caller's work between sections (a migration's monitor), and its say to stop */
	if (!r && w->tick && w->tick(w->tick_arg)) {
		pr_err("the RAM copy was stopped");
		r = -1;
	}
	return r;
}

static int page_is_zero(const uint8_t *p)
{
	const uint64_t *q = (const uint64_t *)p;
	unsigned int i;

	for (i = 0; i < PAGE / 8; i++)
		if (q[i])
			return 0;
	return 1;
}

static void put_record(struct ram_writer *w, uint64_t gpa, enum ram_page_kind kind)
{
	uint64_t word = gpa | kind;

	memcpy(w->buf + w->len, &word, sizeof(word));
	w->len += sizeof(word);
	w->c.pages[kind]++;
}

/* A page read into the section: a data record, or a zero one (the bytes taken back). */
static void put_read_page(struct ram_writer *w, uint64_t gpa, const uint8_t *data)
{
	if (page_is_zero(data)) {
		put_record(w, gpa, RAM_PAGE_ZERO);
		return;
	}
	put_record(w, gpa, RAM_PAGE_DATA);
	memmove(w->buf + w->len, data, PAGE);
	w->len += PAGE;
}

/*
 * n pages at hva through the pipe into dst: how many whole pages came
 * before the kernel refused one (n: all). After a refusal the pipe is made
 * anew: a pipe_write() that faults may leave an empty slot in the ring
 * (6.1's fs/pipe.c), which a read of the bytes that came never frees, and
 * a later full chunk would block in write() with nobody reading.
 */
static unsigned int read_through_kernel(struct ram_writer *w, const uint8_t *hva, uint8_t *dst,
					unsigned int n)
{
	ssize_t wrote, got = 0, r;

	do
		wrote = write(w->pipe[1], hva, n * PAGE);
	while (wrote < 0 && errno == EINTR);
	while (wrote > 0 && got < wrote) {
		r = read(w->pipe[0], dst + got, wrote - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += r;
	}
	if (wrote == (ssize_t)(n * PAGE) && got == wrote)
		return n;
	pipe_close(w);
	if (pipe_open(w)) {
		pr_errno("the RAM copy's pipe");
		return 0;
	}
	return got > 0 ? got / PAGE : 0;
}

/*
 * Up to CHUNK_PAGES pages from gpa, none on the known list: in one read
 * when the kernel gives them all, else page by page from the one it
 * refused (that one is unreadable; the rest may be fine).
 */
static int send_chunk(struct ram_writer *w, const struct vm *vm, uint64_t gpa, unsigned int n)
{
	const uint8_t *hva = memslot_gpa_to_hva(&vm->mem, gpa, n * PAGE);
	uint8_t page[PAGE];
	unsigned int i, ok;

	if (!hva) {
		pr_err("RAM copy: GPA %#llx is not in guest RAM", (unsigned long long)gpa);
		return -1;
	}
	/* read straight into the section, after the records it will need */
	ok = read_through_kernel(w, hva, w->buf + w->len + n * 8, n);
	if (ok == n) {
		uint8_t *data = w->buf + w->len + n * 8;

		for (i = 0; i < n; i++) {
			memcpy(page, data + i * PAGE, PAGE);
			put_read_page(w, gpa + i * PAGE, page);
		}
		return 0;
	}
	w->c.chunks_split++;
	for (i = 0; i < n; i++) {
		if (w->pipe[1] < 0)	/* no new pipe: no page can be told readable or not */
			return -1;
		if (read_through_kernel(w, hva + i * PAGE, page, 1) == 1) {
			put_read_page(w, gpa + i * PAGE, page);
			continue;
		}
		if (w->pipe[1] < 0)
			return -1;
		put_record(w, gpa + i * PAGE, RAM_PAGE_UNREADABLE);
		if (poison_list_add(&w->unreadable, gpa + i * PAGE, PAGE) < 0)
			return -1;
	}
	return 0;
}

int ram_send_range(struct ram_writer *w, const struct vm *vm, uint64_t gpa, uint64_t len)
{
	uint64_t end = gpa + len;

	while (gpa < end) {
		unsigned int n = 0;

		if (w->len + CHUNK_PAGES * (PAGE + 8) > RAM_SECTION_PAGES * (PAGE + 8) &&
		    ram_writer_flush(w))
			return -1;
		if (poison_list_contains(w->known, gpa)) {
			put_record(w, gpa, RAM_PAGE_POISONED);
			gpa += PAGE;
			continue;
		}
		/* a chunk of pages none of which is known poisoned */
		while (n < w->chunk_pages && gpa + n * PAGE < end &&
		       !poison_list_contains(w->known, gpa + n * PAGE))
			n++;
		if (send_chunk(w, vm, gpa, n))
			return -1;
		gpa += n * PAGE;
	}
	return 0;
}

int ram_send_all(struct ram_writer *w, const struct vm *vm)
{
	unsigned int i;

	for (i = 0; i < vm->mem.count; i++)
		if (ram_send_range(w, vm, vm->mem.slots[i].gpa, vm->mem.slots[i].size))
			return -1;
	return ram_writer_flush(w);
}

int ram_apply_section(struct ram_reader *r, const struct vm *vm, const uint8_t *p, uint32_t len)
{
	uint32_t at = 0;

	while (at < len) {
		uint64_t word, gpa;
		unsigned int kind;
		uint8_t *hva;

		if (len - at < sizeof(word)) {
			pr_err("RAM section: a record cut short");
			return -1;
		}
		memcpy(&word, p + at, sizeof(word));
		at += sizeof(word);
		gpa = word & ~KIND_MASK;
		kind = word & KIND_MASK;
		hva = memslot_gpa_to_hva(&vm->mem, gpa, PAGE);
		if (!hva || kind >= RAM_PAGE_KINDS) {
			pr_err("RAM section: a record for GPA %#llx of kind %u: %s",
			       (unsigned long long)gpa, kind,
			       hva ? "no such kind" : "not in this VM's RAM");
			return -1;
		}
		r->c.pages[kind]++;
		/* a migration may send a page again: the last record counts */
		if (kind == RAM_PAGE_DATA || kind == RAM_PAGE_ZERO)
			poison_list_remove(&r->poisoned, gpa);
		switch (kind) {
		case RAM_PAGE_DATA:
			if (len - at < PAGE) {
				pr_err("RAM section: GPA %#llx's page is cut short",
				       (unsigned long long)gpa);
				return -1;
			}
			memcpy(hva, p + at, PAGE);
			at += PAGE;
			break;
		case RAM_PAGE_ZERO:
			/* a fresh VM's RAM reads zero already: write only what boot put there */
			if (!page_is_zero(hva))
				memset(hva, 0, PAGE);
			break;
		default:
			if (poison_list_add(&r->poisoned, gpa, PAGE) < 0)
				return -1;
		}
	}
	return 0;
}
