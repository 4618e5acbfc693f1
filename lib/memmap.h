/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The memslot table a running hwlab-vmm publishes for tools that poison its
 * guest from outside (tools/hwpoison-guest): one text file, written by the
 * VMM and parsed by the tools with this one definition.
 *
 *   # pid 1234 start 5678
 *   # slot gpa size hva backing
 *   0 0 0x1000000 0x7f12c0000000 anon
 *
 * The tool that reads it runs as root and writes a PFN into the kernel's
 * injector, so the file must be one nobody else could have written: the
 * VMM creates it O_EXCL|O_NOFOLLOW, mode 0600, in a directory only its
 * user can enter (memmap_private_dir), and the tool checks owner, mode,
 * pid and the slots against the VMM's mappings before it trusts a line.
 *
 * A pid alone does not name a process for long: a VMM killed by SIGKILL
 * leaves its table behind, and a new hwlab-vmm that gets the same pid
 * (which anyone can arrange through ns_last_pid) would make that stale
 * table point at its own pages. So the table is tied to the one process
 * that wrote it: the header also carries the writer's start time (field 22
 * of /proc/PID/stat, clock ticks since boot; pid and start time name one
 * process for the life of the system), and the VMM keeps the file open
 * (O_CLOEXEC) until it exits. The tool trusts a table only if the header's
 * pid and start time are the live process's and that process holds this
 * very file (st_dev, st_ino) open: a copy or a stale file fails that, and
 * nothing but the writer can hold the file the tool opened.
 *
 * The slots must lie in the VMM's guest RAM (memmap_check_maps): hwlab-vmm
 * marks it VM_DONTDUMP ("dd" in smaps) and, where the kernel has
 * CONFIG_ANON_VMA_NAME, names it [anon:hwlab-guest-ram], so that an unnamed
 * anonymous mapping such as its .bss, a thread's stack or a malloc arena is
 * not taken for guest RAM.
 */
#ifndef HWLAB_MEMMAP_H
#define HWLAB_MEMMAP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
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
/* What hwlab-vmm names its guest RAM: "[anon:hwlab-guest-ram]" in smaps. */
#define HWLAB_GUEST_RAM_NAME	"hwlab-guest-ram"
#define MEMMAP_MAX_SLOTS	16
/* The kernel's PID_MAX_LIMIT on 64-bit; pid_max cannot be set above it. */
#define HWLAB_PID_MAX		(4 * 1024 * 1024)

struct memmap_slot {
	unsigned int id;
	uint64_t gpa, size, hva;
	char backing[16];	/* anon | thp | hugetlb | hugetlb-1g | hugetlb-shared | shmem */
};

struct memmap {
	pid_t pid;		/* the VMM that wrote it; 0 if the header is missing */
	unsigned long long start;	/* its start time (/proc/PID/stat field 22) */
	struct memmap_slot slots[MEMMAP_MAX_SLOTS];
	unsigned int count;
};

/* memmap_dir.c: where tables live */

/* The private directory of a VMM running as uid, and its table's path in it. */
void memmap_default_dir(char *buf, size_t len, uid_t uid);
void memmap_default_path(char *buf, size_t len, pid_t pid, uid_t uid);
/*
 * Make dir (mode 0700) if it is missing; then, new or not, it must be a
 * real directory (no symlink), owned by this process's euid, with no
 * group or other permission bits. Returns the directory open (O_RDONLY,
 * O_CLOEXEC: what was checked is what the caller creates files in), or -1
 * with a message in err.
 */
int memmap_private_dir(const char *dir, char *err, size_t errlen);
/*
 * Remove the stale tables in the private directory dirfd (checked by
 * memmap_private_dir; the caller holds flock(dirfd) so that no VMM
 * publishes meanwhile): regular files named N.memmap, owned by this euid,
 * whose pid N is this process (an earlier VMM's: this one has not
 * published yet), or is dead, or is alive with another start time than
 * the file's header. A table whose process is alive with the header's
 * start time, or alive with a header it cannot read, is never removed.
 * Returns how many it removed, or -1 with a message in err.
 */
int memmap_clean_stale(int dirfd, char *err, size_t errlen);

/* memmap.c: the format */

/* Returns 0, or -1 with errno set. */
int memmap_write(FILE *f, const struct memmap *m);
/*
 * Parse a table, strictly: the "# pid N start T" header once, every number
 * whole and in range, nothing after the fifth field, no overlapping slots.
 * Returns 0, or -1 with a message in err (naming the line where one is
 * wrong; also for no header, no slot, a read error).
 */
int memmap_read(FILE *f, struct memmap *m, char *err, size_t errlen);
/* The slot holding gpa, or NULL. */
const struct memmap_slot *memmap_find_gpa(const struct memmap *m, uint64_t gpa);

/* memmap_proc.c: the process behind a table */

/*
 * A process's start time from its /proc/PID/stat line (field 22, after a
 * command name that may hold blanks and ')'): 0, or -1 if stat is not such
 * a line.
 */
int proc_stat_start_time(const char *stat, unsigned long long *start);
/* The same for a live pid (0: this process); 0 when it cannot be read. */
unsigned long long proc_start_time(pid_t pid);
/*
 * A decimal field of a /proc/PID/status text ("Tgid:\t1234"): the line
 * that begins with name and a colon, its value after blanks, whole, by
 * lib/parse_num.h's rule, at most max. 0, or -1 if there is no such line
 * or its value is not such a number ("-1", "12x", past max).
 */
int proc_status_field(const char *status, const char *name, uint64_t max, uint64_t *out);
/*
 * Does pid hold open the file st describes (one of /proc/PID/fd/ is the
 * same st_dev and st_ino)? 1, 0, or -1 with a message in err (no access
 * to /proc/PID/fd, the process gone).
 */
int memmap_held_by(pid_t pid, const struct stat *st, char *err, size_t errlen);

/* memmap_maps.c: a table against its process's mappings */

/* Which mappings count as guest RAM for memmap_check_maps(). */
enum guest_ram_rule {
	/*
	 * QEMU's RAM (--qmp, --domain), which it does not mark: a private
	 * anonymous mapping, MAP_HUGETLB's "/anon_hugepage (deleted)", or a
	 * private hugetlbfs file mapping (VmFlags "ht").
	 */
	RAM_RULE_QEMU,
	/*
	 * hwlab-vmm's on a kernel without anon VMA names: VmFlags "dd" and a
	 * private anonymous mapping or "/anon_hugepage (deleted)" with "ht".
	 */
	RAM_RULE_HWLAB,
	/*
	 * hwlab-vmm's where the kernel names anonymous VMAs: as above, but an
	 * anonymous mapping must be [anon:hwlab-guest-ram] (hugetlb RAM cannot
	 * be named, its rule stays "/anon_hugepage (deleted)", "ht", "dd").
	 */
	RAM_RULE_HWLAB_NAMED,
};
/*
 * Is every slot's [hva, hva + size) inside guest RAM, by rule, of the
 * process whose /proc/PID/smaps (or maps, which has no VmFlags) is open as
 * maps? A table that points elsewhere (the VMM's own text, .bss or heap,
 * another process's layout) is refused: 0, or -1 with a message in err.
 */
int memmap_check_maps(const struct memmap *m, FILE *maps, enum guest_ram_rule rule, char *err,
		      size_t errlen);
/*
 * For a page of a shared file mapping (hwlab-vmm's hugetlb-shared memfd):
 * does any process but pid hold the file pid maps at hva, open (an fd in
 * /proc/N/fd) or mapped (a line of /proc/N/maps)? pagemap's exclusive bit
 * counts only the mappings faulted in now; a process holding the fd could
 * map the page later and take the poison meant for the guest. 1 with the
 * first holder's pid in *holder, 0 if none, -1 with a message in err (hva
 * not in a file mapping of pid, or /proc unreadable).
 */
int memmap_file_held_elsewhere(pid_t pid, uint64_t hva, pid_t *holder, char *err, size_t errlen);

#endif
