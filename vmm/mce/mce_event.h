/* SPDX-License-Identifier: GPL-2.0 */
/*
 * From a recorded SIGBUS to the machine check that describes it, and the
 * report line for it. Pure: no VM, no locks, so the host unit tests can
 * check every value.
 */
#ifndef HWLAB_MCE_EVENT_H
#define HWLAB_MCE_EVENT_H

#include <linux/kvm.h>

#include "core/memslot.h"
#include "mce/sigbus.h"

struct pending_mce {
	struct kvm_x86_mce mce;
	struct sigbus_event ev;
	struct gpa_extent ext;		/* ext.slot NULL: outside guest RAM */
	unsigned int lsb;		/* the granule used: ev.lsb, or 12 if out of range */
	uint64_t t_queued;		/* AO: when the monitor queued it for a vCPU (0: not) */
	int lsb_out_of_range;
	int lsb_unsplit_thp;		/* lsb > 12 outside hugetlb: the page at si_addr is used */
	int recursive;			/* an AR that found the guest in an #MC already */
	/* how the guest was told: "machine_check", "interrupt" or "poll" (and why) */
	const char *told, *told_why;
	/* an AO the guest could not take yet: why it waits (NULL: it never did) */
	const char *held_why;
};

/*
 * The si_addr_lsb values the kernel can send for guest RAM: a 4 KiB page, up
 * to a PMD-mapped THP or 2 MiB hugetlb page, and in a slot of 1 GiB hugetlb
 * pages (--backing hugetlb-1g) up to 30. Anything else (garbage such as -1
 * or 32767, or a value that would make one event cover more than the slot's
 * pages can lose) is not believed: the event is taken as the 4 KiB page at
 * si_addr, which the address itself proves is poisoned.
 */
#define POISON_LSB_MIN		12
#define POISON_LSB_MAX		21
#define POISON_LSB_MAX_1G	30

/* The largest si_addr_lsb believed for a slot of backing b. */
unsigned int mce_event_max_lsb(enum memslot_backing b);

#define MCE_EVENT_NO_VCPU	(-1)

/*
 * Translate ev through the memslot table and encode its machine check.
 * style: MCE_STYLE_* (mce.h). MCE_STYLE_PAGE_LSB names one 4 KiB page with
 * LSB 12 even when the extent is a huge page (Linux guests); MCE_STYLE_AMD
 * encodes it as an AMD CPU reports it. An si_addr_lsb outside [POISON_LSB_MIN, the max]
 * sets p->lsb_out_of_range and uses the page; the
 * bound is the slot's (mce_event_max_lsb), POISON_LSB_MAX outside RAM. An
 * lsb above 12 in a slot that is not hugetlb is a THP the kernel could not
 * split, which loses only the page at si_addr: p->lsb_unsplit_thp, and the
 * page. Returns 0, or -1 if the address is outside guest RAM.
 */
int mce_event_prepare(const struct memslot_table *mem, int style, const struct sigbus_event *ev,
		      struct pending_mce *p);
/*
 * Into q: ev as the kernel would send it for the 4 KiB page at gpa of
 * slot s (LSB 12), as mce_event_prepare(); a page of a salvaged huge page.
 */
int mce_event_prepare_page(const struct memslot_table *mem, int style, const struct memslot *s,
			   const struct sigbus_event *ev, uint64_t gpa, struct pending_mce *q);
/*
 * The spread (spread.c): after the 4 KiB machine check for one page of
 * a lost huge extent, a Linux guest is told the extent's other pages one by
 * one, an AO each. It covers at most MCE_SPREAD_MAX bytes: the
 * MCE_SPREAD_MAX-aligned block that holds told_gpa, within the extent. That
 * is all of a 2 MiB page; of a 1 GiB page the 512 pages around the one the
 * guest touched, not 262,143 AOs (at the nine a poll an AMD guest takes,
 * eight hours). A page of the rest is told when the guest touches it: the
 * kernel's AR for it, which starts a spread of its own block.
 */
#define MCE_SPREAD_MAX		(2ULL << 20)
struct gpa_extent mce_spread_window(const struct gpa_extent *ext, uint64_t told_gpa);

/* One "sigbus" report line for the event; vcpu is MCE_EVENT_NO_VCPU when none is involved. */
void mce_event_report(int vcpu, const struct pending_mce *p, const char *action,
		      const char *reason);

#endif
