/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The state stream of a snapshot or a migration (issue #21): a header, then
 * sections, each checked on its own, then an end section that counts them.
 *
 *   header   "HWLABVM\n" (8 bytes), u32 version, u32 header size (16)
 *   section  u32 "SECT", u16 type, u16 0, u32 payload length, u32 CRC-32C
 *            of the payload, then the payload (at most STREAM_SECTION_MAX)
 *   end      a section of type STREAM_END: u32 sections before it, u64 their
 *            payload bytes
 *
 * All little-endian, as the x86 hosts that write and read it. A reader
 * takes a whole section into its buffer and checks it before anyone acts
 * on it, so a cut, a flipped bit or another program's file is refused with
 * the section it was found in; what the sections hold is migrate/'s other
 * files' business. Over a file or a socket alike (read/write on an fd).
 */
#ifndef HWLAB_MIGRATE_STREAM_H
#define HWLAB_MIGRATE_STREAM_H

#include <stddef.h>
#include <stdint.h>

#define STREAM_MAGIC		"HWLABVM\n"
#define STREAM_VERSION		1u
#define STREAM_SECTION_MAGIC	0x54434553u	/* "SECT" */
#define STREAM_SECTION_MAX	(4u << 20)

enum stream_section {
	STREAM_CONFIG = 1,	/* the machine it needs (migrate/snapshot.c) */
	STREAM_DEVICES = 2,	/* device_bus_save()'s records */
	STREAM_VM = 3,		/* KVM's VM-wide state: the clock */
	STREAM_VCPU = 4,	/* one vCPU (migrate/vcpu_state.c) */
	STREAM_RAM = 5,		/* page records (migrate/ram.c) */
	STREAM_POISON = 6,	/* poisoned pages and what the guest was told */
	STREAM_END = 0xffff,
};

struct stream {
	int fd;
	const char *name;	/* for messages: the file, or "the socket" */
	uint64_t bytes;		/* payload bytes so far */
	unsigned int sections;	/* sections so far, the end not counted */
	uint64_t wire_bytes;	/* all bytes, headers included */
	uint64_t max_rate;	/* bytes a second a writer keeps under; 0: no limit */
	uint64_t t_start;	/* when the rate was set, and wire_bytes then */
	uint64_t rate_base;
	/*
	 * A socket's (non-blocking): asked every STREAM_POLL_MS while a read
	 * or write waits for the peer; nonzero ends it with an error. NULL: a
	 * regular file, which does not stall.
	 */
	int (*stopped)(void);
	unsigned int timeout_ms;	/* a socket's peer that moves nothing this long: given up */
};

/* A peer that moves no byte for this long is given up. */
#define STREAM_IO_TIMEOUT_S	30
/* How often a wait for the peer asks whether the VMM is to stop. */
#define STREAM_POLL_MS		100

/* A writer on fd: writes the header. 0, or -1 after a message. */
int stream_out_open(struct stream *s, int fd, const char *name);
/*
 * A writer keeps under bytes_per_s from now on (QEMU's max-bandwidth): a
 * migration's copy takes its time instead of a link's or a CPU's all.
 */
void stream_set_rate(struct stream *s, uint64_t bytes_per_s);
/*
 * The same on a connected socket: fd made non-blocking, every wait for
 * the peer (the header's included) bounded by STREAM_IO_TIMEOUT_S and
 * ended by stopped(). 0, or -1 after a message.
 */
int stream_out_socket(struct stream *s, int fd, const char *name, int (*stopped)(void));
/* One section; len <= STREAM_SECTION_MAX. 0, or -1 after a message. */
int stream_put(struct stream *s, enum stream_section type, const void *payload, uint32_t len);
/* The end section. 0, or -1 after a message. */
int stream_out_close(struct stream *s);

/* A reader on fd: reads and checks the header. 0, or -1 after a message. */
int stream_in_open(struct stream *s, int fd, const char *name);
/* A reader on a socket: as stream_out_socket(), then the header. */
int stream_in_socket(struct stream *s, int fd, const char *name, int (*stopped)(void));
/*
 * One byte of a socket stream's hand-over (migrate/migration.h), outside
 * the sections; a get waits at most timeout_ms. 0, or -1 after a message.
 */
int stream_put_byte(struct stream *s, char c);
int stream_get_byte(struct stream *s, char *c, unsigned int timeout_ms);
/*
 * The next section into buf (cap >= STREAM_SECTION_MAX), checked: its
 * magic, length and CRC, and for the end section its counts. *type and
 * *len say what it is. 0, or -1 after a message naming the section.
 */
int stream_get(struct stream *s, enum stream_section *type, void *buf, uint32_t *len);

/* CRC-32C (Castagnoli, as iSCSI and ext4), bitwise-reflected; crc starts at 0. */
uint32_t stream_crc32c(uint32_t crc, const void *p, size_t n);
const char *stream_section_name(unsigned int type);

#endif
