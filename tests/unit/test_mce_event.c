// SPDX-License-Identifier: GPL-2.0
/* From a SIGBUS event to the machine check for it, without a VM. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mce/mce.h"
#include "mce/mce_event.h"
#include "unit.h"

#define MiB (1ULL << 20)

UNIT_TEST(mce_event, "SIGBUS event to machine check")
{
	struct memslot_table mem = { .count = 1 };
	struct sigbus_event ev = { .code = BUS_MCEERR_AR };
	uintptr_t hva = 0x7f0000000000ULL;
	struct pending_mce p;

	/* 2 MiB hugetlb pages: a poisoned one is lost whole (lsb 21) */
	mem.slots[0] = (struct memslot){ .gpa = 0, .size = 16 * MiB, .hva = (uint8_t *)hva,
					 .backing = BACKING_HUGETLB };

	/* 4 KiB AR: QEMU's values at the page */
	ev.addr = hva + 0x523abc;
	ev.lsb = 12;
	CHECK_EQ(mce_event_prepare(&mem, 0, &ev, &p), 0);
	CHECK_EQ(p.ext.gpa, 0x523000);
	CHECK_EQ(p.ext.len, 4096);
	CHECK_EQ(p.mce.addr, 0x523000);
	CHECK_EQ(p.mce.status, 0xBD80000000000134ULL);
	CHECK_EQ(p.mce.mcg_status, 0x7);
	CHECK_EQ(p.mce.misc, 0x8c);
	CHECK_EQ(p.mce.bank, 9);

	/* 2 MiB AR, extent mode: one machine check for the whole huge page */
	ev.addr = hva + 0x923000;
	ev.lsb = 21;
	CHECK_EQ(mce_event_prepare(&mem, 0, &ev, &p), 0);
	CHECK_EQ(p.ext.gpa, 0x800000);
	CHECK_EQ(p.ext.len, 2 * MiB);
	CHECK_EQ(p.mce.addr, 0x800000);
	CHECK_EQ(p.mce.misc, 0x95);

	/* page mode (Linux guests): LSB 12 at the page si_addr names, same extent */
	CHECK_EQ(mce_event_prepare(&mem, 1, &ev, &p), 0);
	CHECK_EQ(p.ext.gpa, 0x800000);
	CHECK_EQ(p.ext.len, 2 * MiB);
	CHECK_EQ(p.mce.addr, 0x923000);
	CHECK_EQ(p.mce.misc, 0x8c);

	/*
	 * Scalable MCA: no MISCV at a page (its MISC0 read would be one more
	 * exit a page), but a whole huge page still says its LSB in MISC0
	 */
	{
		int smca = MCE_STYLE_AMD | MCE_STYLE_SMCA;

		CHECK_EQ(mce_event_prepare(&mem, smca | MCE_STYLE_PAGE_LSB, &ev, &p), 0);
		CHECK_EQ(p.mce.addr, 0x923000);
		CHECK_EQ(p.mce.status & MCI_STATUS_MISCV, 0);
		CHECK_EQ(p.mce.misc, 0);
		CHECK_EQ(mce_event_prepare(&mem, smca, &ev, &p), 0);
		CHECK_EQ(p.mce.addr, 0x800000);
		CHECK(p.mce.status & MCI_STATUS_MISCV, "a huge page's LSB is valid in MISC0");
		CHECK_EQ(p.mce.misc, 0x95);
	}

	/* AO: scrub encoding, no EIPV */
	ev.code = BUS_MCEERR_AO;
	ev.addr = hva + 0x100000;
	ev.lsb = 12;
	CHECK_EQ(mce_event_prepare(&mem, 0, &ev, &p), 0);
	CHECK_EQ(p.mce.status, 0xBD000000000000C0ULL);
	CHECK_EQ(p.mce.mcg_status, 0x5);

	/*
	 * si_addr_lsb the kernel cannot have meant: below a page, above a
	 * 2 MiB page, or garbage (si_addr_lsb is a short). Not "outside guest
	 * RAM", and never a request to retire most of the slot: the 4 KiB page
	 * at si_addr, flagged.
	 */
	{
		static const int bad_lsb[] = { 0, 11, 22, 30, 51, 63, 64, 32767, -1, -32768 };
		unsigned int i;

		ev.code = BUS_MCEERR_AR;
		ev.addr = hva + 0x923abc;
		for (i = 0; i < sizeof(bad_lsb) / sizeof(bad_lsb[0]); i++) {
			ev.lsb = bad_lsb[i];
			CHECK(mce_event_prepare(&mem, 0, &ev, &p) == 0,
			      "lsb %d: the address is in guest RAM", bad_lsb[i]);
			CHECK(p.lsb_out_of_range, "lsb %d is flagged out of range", bad_lsb[i]);
			CHECK_EQ(p.ext.gpa, 0x923000);
			CHECK_EQ(p.ext.len, 4096);
			CHECK_EQ(p.mce.addr, 0x923000);
			CHECK_EQ(p.mce.misc, 0x8c);
		}
		/* the ones the kernel sends are believed */
		ev.lsb = 12;
		mce_event_prepare(&mem, 0, &ev, &p);
		CHECK(!p.lsb_out_of_range, "lsb 12 is in range");
		ev.lsb = 21;
		mce_event_prepare(&mem, 0, &ev, &p);
		CHECK(!p.lsb_out_of_range && p.ext.len == 2 * MiB, "lsb 21 is a 2 MiB extent");
		ev.code = BUS_MCEERR_AO;
		ev.lsb = 12;
	}

	/*
	 * An lsb above 12 in RAM that is not hugetlb: a THP the kernel could
	 * not split (since v6.11 kill_procs_now() sends the folio's shift) and
	 * left mapped; only the page at si_addr is poisoned. That page, LSB 12,
	 * flagged unsplit_thp, not out of range; above 21 it is still garbage.
	 */
	{
		static const int kinds[] = { BACKING_ANON, BACKING_THP };
		unsigned int k;

		for (k = 0; k < 2; k++) {
			mem.slots[0].backing = kinds[k];
			ev.code = BUS_MCEERR_AO;
			ev.addr = hva + 0x923abc;
			ev.lsb = 21;
			CHECK_EQ(mce_event_prepare(&mem, 0, &ev, &p), 0);
			CHECK(p.lsb_unsplit_thp && !p.lsb_out_of_range, "%s lsb 21: an unsplit THP",
			      memslot_backing_name(kinds[k]));
			CHECK_EQ(p.lsb, 12);
			CHECK_EQ(p.ext.gpa, 0x923000);
			CHECK_EQ(p.ext.len, 4096);
			CHECK_EQ(p.mce.addr, 0x923000);
			CHECK_EQ(p.mce.misc, 0x8c);
			/* a Linux guest: the same page, nothing left to spread */
			CHECK_EQ(mce_event_prepare(&mem, MCE_STYLE_PAGE_LSB, &ev, &p), 0);
			CHECK(p.ext.len == 4096 && p.mce.addr == 0x923000,
			      "%s lsb 21, page mode: one page", memslot_backing_name(kinds[k]));
			ev.lsb = 22;
			CHECK_EQ(mce_event_prepare(&mem, 0, &ev, &p), 0);
			CHECK(p.lsb_out_of_range && !p.lsb_unsplit_thp && p.ext.len == 4096,
			      "%s lsb 22: out of range", memslot_backing_name(kinds[k]));
			ev.lsb = 12;
			CHECK_EQ(mce_event_prepare(&mem, 0, &ev, &p), 0);
			CHECK(!p.lsb_unsplit_thp && !p.lsb_out_of_range, "%s lsb 12: as is",
			      memslot_backing_name(kinds[k]));
		}
		mem.slots[0].backing = BACKING_HUGETLB;
	}

	/*
	 * A slot of 1 GiB hugetlb pages (--backing hugetlb-1g): lsb 30 is
	 * believed there, one machine check for the whole GiB (MISC LSB 30),
	 * and only there: the 16 MiB 2 MiB-hugetlb slot above took 30 as garbage.
	 */
	{
		struct memslot_table big = { .count = 1 };
		uintptr_t bh = 0x7f0040000000ULL;

		big.slots[0] = (struct memslot){ .gpa = 0, .size = 2048 * MiB, .hva = (uint8_t *)bh,
						 .backing = BACKING_HUGETLB_1G };
		ev.code = BUS_MCEERR_AR;
		ev.addr = bh + 0x40523abc;
		ev.lsb = 30;
		CHECK_EQ(mce_event_prepare(&big, 0, &ev, &p), 0);
		CHECK(!p.lsb_out_of_range, "lsb 30 in a 1 GiB hugetlb slot is in range");
		CHECK_EQ(p.ext.gpa, 0x40000000);
		CHECK_EQ(p.ext.len, 1024 * MiB);
		CHECK_EQ(p.ext.len / 4096, 262144);
		CHECK_EQ(p.mce.addr, 0x40000000);
		CHECK_EQ(p.mce.misc, 0x9e);
		/* page mode: the 4 KiB page touched, the extent still the GiB */
		CHECK_EQ(mce_event_prepare(&big, 1, &ev, &p), 0);
		CHECK_EQ(p.mce.addr, 0x40523000);
		CHECK_EQ(p.mce.misc, 0x8c);
		CHECK_EQ(p.ext.len, 1024 * MiB);
		/* above the slot's page size: garbage there too */
		ev.lsb = 31;
		CHECK_EQ(mce_event_prepare(&big, 0, &ev, &p), 0);
		CHECK(p.lsb_out_of_range && p.ext.len == 4096 && p.ext.gpa == 0x40523000,
		      "lsb 31 in a 1 GiB hugetlb slot: the 4 KiB page, flagged");
		/* a 2 MiB hugetlb slot: 30 is not believed */
		big.slots[0].backing = BACKING_HUGETLB;
		ev.lsb = 30;
		CHECK_EQ(mce_event_prepare(&big, 0, &ev, &p), 0);
		CHECK(p.lsb_out_of_range && p.ext.len == 4096, "lsb 30 in a 2 MiB hugetlb slot");
		ev.code = BUS_MCEERR_AO;
		ev.lsb = 12;
	}

	/*
	 * The spread a Linux guest gets after one page of a lost extent: the
	 * 2 MiB block around the page told, never the whole of a 1 GiB page
	 * (262,143 AOs).
	 */
	{
		struct gpa_extent gib = { .gpa = 0x40000000, .len = 1024 * MiB }, w;
		struct gpa_extent two = { .gpa = 0x800000, .len = 2 * MiB };
		struct gpa_extent small = { .gpa = 0x801000, .len = 0x3000 };

		w = mce_spread_window(&gib, 0x40523000);
		CHECK_EQ(w.gpa, 0x40400000);
		CHECK_EQ(w.len, 2 * MiB);
		w = mce_spread_window(&gib, 0x7ffff000);	/* the last page */
		CHECK_EQ(w.gpa, 0x7fe00000);
		CHECK_EQ(w.len, 2 * MiB);
		w = mce_spread_window(&two, 0x923000);		/* a 2 MiB page: all of it */
		CHECK_EQ(w.gpa, 0x800000);
		CHECK_EQ(w.len, 2 * MiB);
		w = mce_spread_window(&small, 0x802000);	/* clipped to a slot: as is */
		CHECK_EQ(w.gpa, 0x801000);
		CHECK_EQ(w.len, 0x3000);
		w = mce_spread_window(&gib, 0x1000);		/* not in it: unchanged */
		CHECK_EQ(w.gpa, 0x40000000);
		CHECK_EQ(w.len, 1024 * MiB);
	}

	/* outside guest RAM */
	ev.addr = hva + 16 * MiB;
	CHECK_EQ(mce_event_prepare(&mem, 0, &ev, &p), -1);
	CHECK(p.ext.slot == NULL, "no slot for an address outside RAM");
	CHECK_EQ(p.ev.addr, hva + 16 * MiB);
}

/*
 * The sigbus line mce_event_report() prints for p, into line (stdout to a
 * file meanwhile: before report_start() the report channel writes at once).
 */
static void report_line(const struct pending_mce *p, char *line, size_t len)
{
	char path[] = "/tmp/hwlab-unit-XXXXXX";
	int fd = mkstemp(path), saved = dup(STDOUT_FILENO);
	FILE *f;

	line[0] = 0;
	fflush(stdout);
	dup2(fd, STDOUT_FILENO);
	mce_event_report(0, p, "injected", NULL);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	f = fdopen(fd, "r");
	rewind(f);
	if (!fgets(line, len, f))
		line[0] = 0;
	fclose(f);
	unlink(path);
}

/* how the guest heard of the error (SMCA, #24): "told", and for the poll "told_why" */
UNIT_TEST(mce_event_told, "sigbus line: how the guest was told")
{
	struct memslot_table mem = { .count = 1 };
	uintptr_t hva = 0x7f0000000000ULL;
	struct sigbus_event ev = { .code = BUS_MCEERR_AO, .addr = hva + 0x523000, .lsb = 12 };
	static const char why[] = "poll: the deferred-error LVT entry is masked";
	struct pending_mce p;
	char line[2048];

	/* 2 MiB hugetlb pages: a poisoned one is lost whole (lsb 21) */
	mem.slots[0] = (struct memslot){ .gpa = 0, .size = 16 * MiB, .hva = (uint8_t *)hva,
					 .backing = BACKING_HUGETLB };
	CHECK_EQ(mce_event_prepare(&mem, 1, &ev, &p), 0);

	/* nobody decided: neither key (a bare-metal guest, an Intel one) */
	report_line(&p, line, sizeof(line));
	CHECK(strstr(line, "\"event\":\"sigbus\"") != NULL, "a sigbus line: %s", line);
	CHECK(!strstr(line, "\"told\""), "no told: %s", line);
	CHECK(!strstr(line, "\"told_why\""), "no told_why: %s", line);

	/* the deferred-error interrupt: told, no why */
	p.told = "interrupt";
	report_line(&p, line, sizeof(line));
	CHECK(strstr(line, ",\"told\":\"interrupt\"") != NULL, "told interrupt: %s", line);
	CHECK(!strstr(line, "\"told_why\""), "no told_why: %s", line);

	/* the poll, and why */
	p.told = "poll";
	p.told_why = why;
	report_line(&p, line, sizeof(line));
	CHECK(strstr(line, ",\"told\":\"poll\",\"told_why\":\"poll: the deferred-error LVT "
		     "entry is masked\"") != NULL, "told poll, and why: %s", line);
	/* still one JSON object: the keys after it are there */
	CHECK(strstr(line, "\"t_ns\":") != NULL && line[strlen(line) - 2] == '}',
	      "the line ends well: %s", line);
}
