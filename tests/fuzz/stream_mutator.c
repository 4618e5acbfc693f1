// SPDX-License-Identifier: GPL-2.0
#include "stream_mutator.h"

#include <stdlib.h>
#include <string.h>

#include "migrate/stream.h"

#define HEADER_SIZE	16
#define SECT_HDR_SIZE	16
#define MAX_SECTS	1024

/* A section as found in an input: its header fields and where its payload is. */
struct sect {
	uint32_t magic;
	uint16_t type, zero;
	const uint8_t *p;
	uint32_t len;
};

struct parsed {
	const uint8_t *header;		/* HEADER_SIZE bytes */
	struct sect s[MAX_SECTS];
	unsigned int n;
	const uint8_t *tail;		/* bytes after the last whole section header */
	size_t tail_len;
};

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint16_t get16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * The sections of data: a length that claims more than is left takes what
 * is left (the rebuild writes the true length). -1: not even a header.
 */
static int parse(const uint8_t *data, size_t size, struct parsed *ps)
{
	size_t pos = HEADER_SIZE;

	if (size < HEADER_SIZE)
		return -1;
	ps->header = data;
	ps->n = 0;
	while (pos + SECT_HDR_SIZE <= size && ps->n < MAX_SECTS) {
		struct sect *s = &ps->s[ps->n++];
		size_t avail = size - pos - SECT_HDR_SIZE;
		uint32_t len = get32(data + pos + 8);

		s->magic = get32(data + pos);
		s->type = get16(data + pos + 4);
		s->zero = get16(data + pos + 6);
		s->len = len > avail ? (uint32_t)avail : len;
		s->p = data + pos + SECT_HDR_SIZE;
		pos += SECT_HDR_SIZE + s->len;
	}
	ps->tail = data + pos;
	ps->tail_len = size - pos;
	return 0;
}

unsigned int stream_input_crcs_right(const uint8_t *data, size_t size)
{
	struct parsed *ps = malloc(sizeof(*ps));
	unsigned int i, right = 0;

	if (ps && !parse(data, size, ps) && !ps->tail_len) {
		for (i = 0; i < ps->n; i++) {
			const uint8_t *h = ps->s[i].p - SECT_HDR_SIZE;

			if (stream_crc32c(stream_crc32c(0, h + 4, 8), ps->s[i].p, ps->s[i].len) !=
			    get32(h + 12) || get32(h + 8) != ps->s[i].len)
				break;
		}
		right = ps->n && i == ps->n;
	}
	free(ps);
	return right;
}

#ifndef HWLAB_FUZZ_NO_MUTATOR
/* xorshift32: the mutation's own choices, reproducible from libFuzzer's seed */
static uint32_t next_rand(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

static void put_sect(uint8_t *out, uint16_t type, const uint8_t *p, uint32_t len)
{
	uint32_t magic = STREAM_SECTION_MAGIC, crc;
	uint16_t zero = 0;

	memcpy(out, &magic, 4);
	memcpy(out + 4, &type, 2);
	memcpy(out + 6, &zero, 2);
	memcpy(out + 8, &len, 4);
	/* stream.c's section_crc(): over type, zero and length, then the payload */
	crc = stream_crc32c(stream_crc32c(0, out + 4, 8), p, len);
	memcpy(out + 12, &crc, 4);
	memmove(out + SECT_HDR_SIZE, p, len);
}

/*
 * The stream of ps's sections into out (at most max bytes): a proper
 * header, each section's CRC right, every end section counting what came
 * before it, and an end section after the last if there is none. Returns
 * the size, or 0 if it does not fit. The trailing bytes are dropped.
 */
static size_t rebuild(const struct parsed *ps, uint8_t *out, size_t max)
{
	uint32_t header_words[2] = { STREAM_VERSION, HEADER_SIZE };
	uint64_t bytes = 0;
	uint32_t count = 0;
	size_t pos = HEADER_SIZE;
	unsigned int i;
	int ended = 0;

	if (max < HEADER_SIZE)
		return 0;
	memcpy(out, STREAM_MAGIC, 8);
	memcpy(out + 8, header_words, 8);
	for (i = 0; i < ps->n; i++) {
		const struct sect *s = &ps->s[i];
		uint8_t end[16];
		const uint8_t *p = s->p;

		if (pos + SECT_HDR_SIZE + s->len > max)
			return 0;
		if (s->type == STREAM_END && s->len == sizeof(end)) {
			memset(end, 0, sizeof(end));
			memcpy(end, &count, 4);
			memcpy(end + 8, &bytes, 8);
			p = end;
			ended = 1;
		} else if (s->type != STREAM_END) {
			count++;
			bytes += s->len;
			ended = 0;
		}
		put_sect(out + pos, s->type, p, s->len);
		pos += SECT_HDR_SIZE + s->len;
	}
	if (!ended) {
		uint8_t end[16] = { 0 };

		if (pos + SECT_HDR_SIZE + sizeof(end) > max)
			return 0;
		memcpy(end, &count, 4);
		memcpy(end + 8, &bytes, 8);
		put_sect(out + pos, STREAM_END, end, sizeof(end));
		pos += SECT_HDR_SIZE + sizeof(end);
	}
	return pos;
}

static const uint16_t types[] = {
	STREAM_CONFIG, STREAM_DEVICES, STREAM_VM, STREAM_VCPU, STREAM_RAM, STREAM_POISON,
	STREAM_END, 0, 7,
};

/* One change to ps's sections; payloads that change go to scratch (room: cap bytes). */
static void change_sections(struct parsed *ps, uint8_t *scratch, size_t max_size, size_t size,
			    uint32_t *rnd)
{
	unsigned int i = ps->n ? next_rand(rnd) % ps->n : 0, j;
	uint32_t what = next_rand(rnd) % 16;
	struct sect tmp;

	if (!ps->n)
		what = 12;	/* nothing to change: add one */
	/*
	 * An end section's payload is written again by rebuild(), and a config
	 * the machine does not match stops the restore at once: mostly pick
	 * another section to mutate.
	 */
	for (j = 0; j < 4 && ps->n > 1 && what < 10 &&
		    (ps->s[i].type == STREAM_END ||
		     ((ps->s[i].type == STREAM_CONFIG || ps->s[i].type == STREAM_RAM) &&
		      next_rand(rnd) % 4)); j++)
		i = next_rand(rnd) % ps->n;
	if (what < 10) {
		/* the payload, by libFuzzer's mutations (most of the time) */
		size_t others = size - ps->s[i].len + 2 * SECT_HDR_SIZE;	/* and an end */
		size_t room = max_size > others ? max_size - others : 0;

		if (room < ps->s[i].len)
			return;
		if (room > STREAM_SECTION_MAX)
			room = STREAM_SECTION_MAX;
		memcpy(scratch, ps->s[i].p, ps->s[i].len);
		ps->s[i].len = LLVMFuzzerMutate(scratch, ps->s[i].len, room);
		ps->s[i].p = scratch;
	} else if (what == 10) {
		ps->s[i].type = next_rand(rnd) % 8 ? types[next_rand(rnd) % (sizeof(types) / 2)] :
						      (uint16_t)next_rand(rnd);
	} else if (what == 11 && ps->n > 1) {
		ps->n--;	/* a section taken out */
		memmove(&ps->s[i], &ps->s[i + 1], (ps->n - i) * sizeof(ps->s[0]));
	} else if (what == 12 && ps->n < MAX_SECTS) {
		/* a section again (a second config, a vCPU twice), or a new empty one */
		if (ps->n)
			tmp = ps->s[i];
		else
			tmp = (struct sect) { .type = types[next_rand(rnd) % 6], .p = scratch };
		j = next_rand(rnd) % (ps->n + 1);
		memmove(&ps->s[j + 1], &ps->s[j], (ps->n - j) * sizeof(ps->s[0]));
		ps->s[j] = tmp;
		ps->n++;
	} else if (ps->n > 1) {
		/* two sections swapped: the order a restore insists on */
		j = next_rand(rnd) % ps->n;
		tmp = ps->s[i];
		ps->s[i] = ps->s[j];
		ps->s[j] = tmp;
	}
}

/* A wrong CRC or end count on purpose, in a rebuilt stream of size bytes. */
static void break_checksum(uint8_t *out, size_t size, uint32_t *rnd)
{
	struct parsed *ps = malloc(sizeof(*ps));
	const struct sect *s;

	if (!ps || parse(out, size, ps) || !ps->n) {
		free(ps);
		return;
	}
	s = &ps->s[next_rand(rnd) % ps->n];
	/* the CRC field is just before the payload */
	out[s->p - out - 4 + next_rand(rnd) % 4] ^= 1u << (next_rand(rnd) % 8);
	free(ps);
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
	uint32_t rnd = seed | 1;
	struct parsed *ps;
	uint8_t *scratch, *out;
	size_t n = 0;

	if (next_rand(&rnd) % 16 == 0)
		return LLVMFuzzerMutate(data, size, max_size);
	ps = malloc(sizeof(*ps));
	scratch = malloc(max_size);
	out = malloc(max_size);
	if (ps && scratch && out && !parse(data, size, ps)) {
		change_sections(ps, scratch, max_size, size, &rnd);
		n = rebuild(ps, out, max_size);
	}
	if (n) {
		if (next_rand(&rnd) % 16 == 0)
			break_checksum(out, n, &rnd);
		memcpy(data, out, n);
	} else {
		n = LLVMFuzzerMutate(data, size, max_size);
	}
	free(ps);
	free(scratch);
	free(out);
	return n;
}

size_t LLVMFuzzerCustomCrossOver(const uint8_t *d1, size_t s1, const uint8_t *d2, size_t s2,
				 uint8_t *out, size_t max_out, unsigned int seed)
{
	struct parsed *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	uint32_t rnd = seed | 1;
	unsigned int i, j;
	size_t n = 0;

	if (!a || !b || parse(d1, s1, a) || parse(d2, s2, b))
		goto out;
	/* the first i sections of one stream, then the other's from its j-th on */
	i = next_rand(&rnd) % (a->n + 1);
	j = next_rand(&rnd) % (b->n + 1);
	for (; j < b->n && i < MAX_SECTS; j++)
		a->s[i++] = b->s[j];
	a->n = i;
	n = rebuild(a, out, max_out);
out:
	free(a);
	free(b);
	return n;
}
#endif
