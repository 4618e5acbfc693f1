// SPDX-License-Identifier: GPL-2.0
#include "migrate/stream.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"

struct section_header {
	uint32_t magic;
	uint16_t type;
	uint16_t zero;
	uint32_t len;
	uint32_t crc;
};

struct stream_header {
	char magic[8];
	uint32_t version;
	uint32_t size;
};

struct stream_end {
	uint32_t sections;
	uint32_t zero;
	uint64_t bytes;
};

static uint32_t crc_table[256];
static pthread_once_t crc_table_once = PTHREAD_ONCE_INIT;

static void crc_table_fill(void)
{
	uint32_t i, j, c;

	for (i = 0; i < 256; i++) {
		c = i;
		for (j = 0; j < 8; j++)
			c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
		crc_table[i] = c;
	}
}

uint32_t stream_crc32c(uint32_t crc, const void *p, size_t n)
{
	const uint8_t *b = p;

	pthread_once(&crc_table_once, crc_table_fill);
	crc = ~crc;
	while (n--)
		crc = crc_table[(crc ^ *b++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

const char *stream_section_name(unsigned int type)
{
	switch (type) {
	case STREAM_CONFIG:
		return "config";
	case STREAM_DEVICES:
		return "devices";
	case STREAM_VM:
		return "vm";
	case STREAM_VCPU:
		return "vcpu";
	case STREAM_RAM:
		return "ram";
	case STREAM_POISON:
		return "poison";
	case STREAM_END:
		return "end";
	}
	return "unknown";
}

/* A section's CRC: over its type and length too, so that a flipped type is caught here. */
static uint32_t section_crc(const struct section_header *h, const void *payload)
{
	uint32_t crc = stream_crc32c(0, &h->type, sizeof(h->type) + sizeof(h->zero) + sizeof(h->len));

	return stream_crc32c(crc, payload, h->len);
}

void stream_set_rate(struct stream *s, uint64_t bytes_per_s)
{
	s->max_rate = bytes_per_s;
	s->t_start = monotonic_ns();
	s->rate_base = s->wire_bytes;
}

/*
 * Sleep until the bytes written so far are within the rate, in slices that
 * ask the stop question. 0, or -1 after a message (stopped).
 */
static int keep_rate(struct stream *s)
{
	uint64_t due, now, ns;
	struct timespec ts;

	if (!s->max_rate)
		return 0;
	due = s->t_start + (s->wire_bytes - s->rate_base) * 1000000000ull / s->max_rate;
	while ((now = monotonic_ns()) < due) {
		if (s->stopped && s->stopped()) {
			pr_err("writing the state stream on %s: stopped", s->name);
			return -1;
		}
		ns = due - now < STREAM_POLL_MS * 1000000ull ? due - now : STREAM_POLL_MS * 1000000ull;
		ts.tv_sec = ns / 1000000000ull;
		ts.tv_nsec = ns % 1000000000ull;
		nanosleep(&ts, NULL);
	}
	return 0;
}

/*
 * A socket's fd is non-blocking: a read or write that cannot move waits in
 * poll() slices of STREAM_POLL_MS, so that the stop question is asked
 * whichever thread the stop signal went to (and the stop handler's
 * SA_RESTART restarts no wait here), and a peer that moves nothing for
 * s->timeout_ms is given up.
 */
static int on_socket(struct stream *s, int (*stopped)(void))
{
	int fl = fcntl(s->fd, F_GETFL);

	s->stopped = stopped;
	s->timeout_ms = STREAM_IO_TIMEOUT_S * 1000;
	if (fl < 0 || fcntl(s->fd, F_SETFL, fl | O_NONBLOCK)) {
		pr_errno("the migration socket: non-blocking");
		return -1;
	}
	return 0;
}

/*
 * Wait until fd can move (events) for at most s->timeout_ms: 1 when it
 * can, or 0 after a message (stopped, or the peer stalled).
 */
static int wait_ready(struct stream *s, short events, const char *what)
{
	struct pollfd p = { .fd = s->fd, .events = events };
	uint64_t deadline = monotonic_ns() + (uint64_t)s->timeout_ms * 1000000;

	for (;;) {
		if (s->stopped && s->stopped()) {
			pr_err("%s the state stream on %s: stopped", what, s->name);
			return 0;
		}
		if (poll(&p, 1, STREAM_POLL_MS) > 0)
			return 1;
		if (monotonic_ns() >= deadline) {
			pr_err("%s the state stream on %s: nothing moved for %u s (the peer stalled)",
			       what, s->name, s->timeout_ms / 1000);
			return 0;
		}
	}
}

/*
 * A read or write that did not move: 1 to retry (a signal; a socket that
 * became ready), or 0 after a message.
 */
static int retry(struct stream *s, const char *what, short events)
{
	if (errno == EINTR && !(s->stopped && s->stopped()))
		return 1;
	if (s->stopped && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return wait_ready(s, events, what);
	pr_errno("%s the state stream on %s", what, s->name);
	return 0;
}

static int write_all(struct stream *s, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n) {
		ssize_t w = write(s->fd, b, n);

		if (w < 0 && retry(s, "writing", POLLOUT))
			continue;
		if (w < 0)
			return -1;
		if (w == 0) {
			pr_err("writing the state stream to %s: no byte taken", s->name);
			return -1;
		}
		b += w;
		n -= w;
		s->wire_bytes += w;
		if (keep_rate(s))
			return -1;
	}
	return 0;
}

/* 1: all n bytes; 0: the stream ended first (after *got bytes); -1: an error, said. */
static int read_all(struct stream *s, void *p, size_t n, size_t *got)
{
	uint8_t *b = p;

	*got = 0;
	while (*got < n) {
		ssize_t r = read(s->fd, b + *got, n - *got);

		if (r < 0 && retry(s, "reading", POLLIN))
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			return 0;
		*got += r;
		s->wire_bytes += r;
	}
	return 1;
}

static int write_header(struct stream *s)
{
	struct stream_header h = { .version = STREAM_VERSION, .size = sizeof(h) };

	memcpy(h.magic, STREAM_MAGIC, sizeof(h.magic));
	return write_all(s, &h, sizeof(h));
}

int stream_put(struct stream *s, enum stream_section type, const void *payload, uint32_t len)
{
	struct section_header h = { .magic = STREAM_SECTION_MAGIC, .type = type, .len = len };

	if (len > STREAM_SECTION_MAX) {
		pr_err("state stream: a %s section of %u bytes, more than %u",
		       stream_section_name(type), len, STREAM_SECTION_MAX);
		return -1;
	}
	h.crc = section_crc(&h, payload);
	if (write_all(s, &h, sizeof(h)) || write_all(s, payload, len))
		return -1;
	if (type != STREAM_END) {
		s->sections++;
		s->bytes += len;
	}
	return 0;
}

int stream_out_close(struct stream *s)
{
	struct stream_end e = { .sections = s->sections, .bytes = s->bytes };

	return stream_put(s, STREAM_END, &e, sizeof(e));
}

static int read_header(struct stream *s)
{
	const char *name = s->name;
	struct stream_header h;
	size_t got;
	int r;

	r = read_all(s, &h, sizeof(h), &got);
	if (r < 0)
		return -1;
	if (got >= sizeof(h.magic) && memcmp(h.magic, STREAM_MAGIC, sizeof(h.magic))) {
		pr_err("%s is not an hwlab-vmm state stream (no \"HWLABVM\" header)", name);
		return -1;
	}
	if (!r) {
		pr_err("%s: the state stream ends inside its header (%zu of %zu bytes)", name,
		       got, sizeof(h));
		return -1;
	}
	if (h.version != STREAM_VERSION || h.size != sizeof(h)) {
		pr_err("%s: state stream version %u (header %u bytes); this hwlab-vmm reads "
		       "version %u only", name, h.version, h.size, STREAM_VERSION);
		return -1;
	}
	return 0;
}

int stream_out_open(struct stream *s, int fd, const char *name)
{
	*s = (struct stream) { .fd = fd, .name = name };
	return write_header(s);
}

int stream_in_open(struct stream *s, int fd, const char *name)
{
	*s = (struct stream) { .fd = fd, .name = name };
	return read_header(s);
}

int stream_out_socket(struct stream *s, int fd, const char *name, int (*stopped)(void))
{
	*s = (struct stream) { .fd = fd, .name = name };
	return on_socket(s, stopped) || write_header(s) ? -1 : 0;
}

/* The timeouts and the stop question before the header: a peer may stall inside it. */
int stream_in_socket(struct stream *s, int fd, const char *name, int (*stopped)(void))
{
	*s = (struct stream) { .fd = fd, .name = name };
	return on_socket(s, stopped) || read_header(s) ? -1 : 0;
}

int stream_put_byte(struct stream *s, char c)
{
	return write_all(s, &c, 1);
}

int stream_get_byte(struct stream *s, char *c, unsigned int timeout_ms)
{
	unsigned int was = s->timeout_ms;
	size_t got;
	int r;

	s->timeout_ms = timeout_ms;
	r = read_all(s, c, 1, &got);
	s->timeout_ms = was;
	if (!r)
		pr_err("reading the state stream on %s: the peer closed it", s->name);
	return r == 1 ? 0 : -1;
}

int stream_get(struct stream *s, enum stream_section *type, void *buf, uint32_t *len)
{
	unsigned int n = s->sections + 1;
	struct section_header h;
	struct stream_end e;
	size_t got;
	int r;

	r = read_all(s, &h, sizeof(h), &got);
	if (r < 0)
		return -1;
	if (!r) {
		pr_err("%s: the state stream is cut short before section %u (no end section)",
		       s->name, n);
		return -1;
	}
	if (h.magic != STREAM_SECTION_MAGIC || h.zero) {
		pr_err("%s: section %u has a damaged header", s->name, n);
		return -1;
	}
	if (h.len > STREAM_SECTION_MAX) {
		pr_err("%s: section %u (%s) claims %u bytes, more than %u", s->name, n,
		       stream_section_name(h.type), h.len, STREAM_SECTION_MAX);
		return -1;
	}
	r = read_all(s, buf, h.len, &got);
	if (r < 0)
		return -1;
	if (!r) {
		pr_err("%s: the state stream is cut short in section %u (%s): %zu of %u bytes",
		       s->name, n, stream_section_name(h.type), got, h.len);
		return -1;
	}
	if (section_crc(&h, buf) != h.crc) {
		pr_err("%s: section %u (%s, %u bytes) is corrupted: its CRC-32C does not match",
		       s->name, n, stream_section_name(h.type), h.len);
		return -1;
	}
	*type = h.type;
	*len = h.len;
	if (h.type != STREAM_END) {
		s->sections++;
		s->bytes += h.len;
		return 0;
	}
	if (h.len != sizeof(e)) {
		pr_err("%s: the end section has %u bytes, not %zu", s->name, h.len, sizeof(e));
		return -1;
	}
	memcpy(&e, buf, sizeof(e));
	if (e.sections != s->sections || e.bytes != s->bytes) {
		pr_err("%s: the end section counts %u sections of %llu bytes; %u of %llu came",
		       s->name, e.sections, (unsigned long long)e.bytes, s->sections,
		       (unsigned long long)s->bytes);
		return -1;
	}
	return 0;
}
