/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Guest RAM: host mappings behind the memslots (anon, THP, hugetlb), fresh
 * memory for poisoned pages on reset (guest_ram.c), and the memslot table
 * published for tools (lib/memmap.h; guest_ram_publish.c).
 */
#ifndef HWLAB_GUEST_RAM_H
#define HWLAB_GUEST_RAM_H

#include <stdint.h>

struct vm;

/*
 * A new mapping of size bytes of 4 KiB anonymous pages, marked as guest RAM
 * (MADV_DONTDUMP, named): where a salvage builds what replaces a lost huge
 * page before moving it into place. MAP_FAILED on error.
 */
void *guest_ram_map_anon(uint64_t size);
struct memslot;
/*
 * hugetlb-shared slot s's file mapped again at [at, at + size), shared, at
 * that range's offset, marked; nothing punched (a salvage that could not
 * move its replacement in puts the lost page back). MAP_FAILED on error.
 */
void *guest_ram_map_file(const struct memslot *s, void *at, uint64_t size);
/* Map vm->opt->mem_size in nr_slots slots and register each with KVM. */
int guest_ram_create(struct vm *vm);
/*
 * What QEMU does on guest reset (kvm_unpoison_all): give every poisoned
 * page fresh memory at the same address and forget the poison, so the
 * rebooted guest can use it. The old physical page stays isolated.
 * The pages are guest memory's own list (vm->poisoned), emptied here.
 */
int guest_ram_remap_poisoned(struct vm *vm);

/*
 * Reset: fresh memory under everything the VMM itself writes at boot (page
 * tables, GDT, boot info, the ELF: all below GUEST_WORKSET_GPA; for a Linux
 * guest the zero page, the kernel and the initrd). With late
 * kill a page there may be poisoned without the VMM having heard of it (the
 * guest never touched it again); the VMM's own store into it would consume
 * the poison and end the VMM. Nothing there needs keeping: boot rewrites it.
 * The n areas are the boot layer's (guest_boot_areas()): memory does not
 * know the guest's kind.
 */
int guest_ram_refresh_boot_area(struct vm *vm, const uint64_t *gpa, const uint64_t *len,
				unsigned int n);
/*
 * Publish the memslot table: at path (--memmap), or NULL for the default
 * in this user's private directory (lib/memmap.h). The file is created
 * new (O_EXCL|O_NOFOLLOW, mode 0600), its header names this process (pid
 * and start time), it stays open until the VMM exits, and it is removed at
 * every exit: atexit(), and guest_ram_unpublish() for the paths that skip
 * it. First the private directory's stale tables (of processes that are
 * gone) are removed, under the directory's lock. 0, or -1 after a message
 * (with nothing left behind). A wait for another process's lock ends on
 * stopped() (NULL: none) or after 5 s.
 */
int guest_ram_publish(const struct vm *vm, const char *path, int (*stopped)(void));
/* Remove the published table, if any. Async-signal-safe: only unlink(2). */
void guest_ram_unpublish(void);
/* Where the table was published ("" when it is not). */
const char *guest_ram_published_path(void);
/* How many stale tables guest_ram_publish() removed from the private directory. */
unsigned int guest_ram_stale_removed(void);
/*
 * 1 if every anonymous guest RAM mapping is named [anon:hwlab-guest-ram]
 * (the kernel has CONFIG_ANON_VMA_NAME), else 0; all of it is MADV_DONTDUMP.
 */
int guest_ram_named(void);

#endif
