/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The memslot table a running hwlab-vmm publishes for tools that poison its
 * guest from outside (tools/hwpoison-guest): one text file, written by the
 * VMM and parsed by the tools with this one definition.
 *
 *   # pid 1234
 *   # slot gpa size hva backing
 *   0 0 0x1000000 0x7f12c0000000 anon
 *
 * The tool that reads it runs as root and writes a PFN into the kernel's
 * injector, so the file must be one nobody else could have written: the
 * VMM creates it O_EXCL|O_NOFOLLOW, mode 0600, in a directory only its
 * user can enter (memmap_private_dir), and the tool checks owner, mode,
 * pid and the slots against the VMM's mappings before it trusts a line.
 */
#ifndef HWLAB_MEMMAP_H
#define HWLAB_MEMMAP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/*
 * Where a VMM publishes its table unless told otherwise: a private
 * directory per user, /run/hwlab-vmm for root (the outer VM, the tests) and
 * /tmp/hwlab-vmm-UID for anyone else, who cannot write /run. In /tmp anyone
 * may create that name first; memmap_private_dir() then refuses it (owner
 * or mode), which is a clear failure, never a file somebody else controls.
 */
#define HWLAB_MEMMAP_ROOT_DIR	"/run/hwlab-vmm"
#define HWLAB_MEMMAP_USER_DIR	"/tmp/hwlab-vmm-%u"
#define HWLAB_MEMMAP_FILE	"%d.memmap"
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

/* The private directory of a VMM running as uid, and its table's path in it. */
void memmap_default_dir(char *buf, size_t len, uid_t uid);
void memmap_default_path(char *buf, size_t len, pid_t pid, uid_t uid);
/*
 * Make dir (mode 0700) if it is missing; then, new or not, it must be a
 * real directory (no symlink), owned by this process's euid, with no
 * group or other permission bits. Returns 0, or -1 with a message in err.
 */
int memmap_private_dir(const char *dir, char *err, size_t errlen);
/* Returns 0, or -1 with errno set. */
int memmap_write(FILE *f, const struct memmap *m);
/*
 * Parse a table, strictly: the "# pid N" header once, every number whole
 * and in range, nothing after the fifth field, no overlapping slots.
 * Returns 0, or -1 with a message in err (naming the line where one is
 * wrong; also for no header, no slot, a read error).
 */
int memmap_read(FILE *f, struct memmap *m, char *err, size_t errlen);
/*
 * Is every slot's [hva, hva + size) inside writable mappings of the
 * process whose /proc/PID/maps is open as maps? A table that points
 * elsewhere (the VMM's own text, another process's layout) is refused:
 * 0, or -1 with a message in err.
 */
int memmap_check_maps(const struct memmap *m, FILE *maps, char *err, size_t errlen);
/* The slot holding gpa, or NULL. */
const struct memmap_slot *memmap_find_gpa(const struct memmap *m, uint64_t gpa);

#endif
