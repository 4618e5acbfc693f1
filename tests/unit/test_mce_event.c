// SPDX-License-Identifier: GPL-2.0
/* From a SIGBUS event to the machine check for it, without a VM. */
#include <signal.h>
#include <string.h>

#include "mce_event.h"
#include "unit.h"

#define MiB (1ULL << 20)

void test_mce_event(void)
{
	struct memslot_table mem = { .count = 1 };
	struct sigbus_event ev = { .code = BUS_MCEERR_AR };
	uintptr_t hva = 0x7f0000000000ULL;
	struct pending_mce p;

	mem.slots[0] = (struct memslot){ .gpa = 0, .size = 16 * MiB, .hva = (uint8_t *)hva };

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

	/* outside guest RAM */
	ev.addr = hva + 16 * MiB;
	CHECK_EQ(mce_event_prepare(&mem, 0, &ev, &p), -1);
	CHECK(p.ext.slot == NULL, "no slot for an address outside RAM");
	CHECK_EQ(p.ev.addr, hva + 16 * MiB);
}
