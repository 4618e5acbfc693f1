/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The memslot table a running hwlab-vmm publishes for tools that poison its
 * guest from outside (tools/hwpoison-guest): one text file, written by the
 * VMM and parsed by the tools with this one definition.
 *
 *   # pid 1234
 *   # slot gpa size hva backing
 *   0 0 0x1000000 0x7f12c0000000 anon
 */
#ifndef HWLAB_MEMMAP_H
#define HWLAB_MEMMAP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* Where a VMM with this pid publishes its table unless told otherwise. */
#define HWLAB_MEMMAP_FMT	"/tmp/hwlab-vmm.%d.memmap"
#define MEMMAP_MAX_SLOTS	16
/* The kernel's PID_MAX_LIMIT on 64-bit; pid_max cannot be set above it. */
#define HWLAB_PID_MAX		(4 * 1024 * 1024)

struct memmap_slot {
	unsigned int id;
	uint64_t gpa, size, hva;
	char backing[16];	/* anon | thp | hugetlb */
};

struct memmap {
	pid_t pid;		/* the VMM that wrote it; 0 if the header is missing */
	struct memmap_slot slots[MEMMAP_MAX_SLOTS];
	unsigned int count;
};

void memmap_default_path(char *buf, size_t len, pid_t pid);
/* Returns 0, or -1 with errno set. */
int memmap_write(FILE *f, const struct memmap *m);
/*
 * Parse a table, strictly: the "# pid N" header once, every number whole
 * and in range, nothing after the fifth field, no overlapping slots.
 * Returns 0, or -1 with a message in err (naming the line where one is
 * wrong; also for no header, no slot, a read error).
 */
int memmap_read(FILE *f, struct memmap *m, char *err, size_t errlen);
/* The slot holding gpa, or NULL. */
const struct memmap_slot *memmap_find_gpa(const struct memmap *m, uint64_t gpa);

#endif
