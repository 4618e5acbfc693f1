// SPDX-License-Identifier: GPL-2.0
#include "core/poison_list.h"
#include "unit.h"

UNIT_TEST(poison_list, "poisoned-page list")
{
	struct poison_list l = { 0 };
	unsigned int i, sorted = 1;

	CHECK_EQ(poison_list_add(&l, 0x5000, 4096), 1);
	CHECK_EQ(poison_list_add(&l, 0x5000, 4096), 0);		/* duplicate */
	CHECK_EQ(poison_list_add(&l, 0x5abc, 1), 0);		/* same page, unaligned */
	CHECK_EQ(poison_list_add(&l, 0x3000, 4096), 1);
	CHECK_EQ(l.count, 2);
	CHECK(poison_list_contains(&l, 0x5fff), "contains 0x5fff");
	CHECK(!poison_list_contains(&l, 0x6000), "not 0x6000");

	/* a 2 MiB extent adds 512 pages, minus the one already known */
	CHECK_EQ(poison_list_add(&l, 0x200000, 0x200000), 512);
	CHECK_EQ(poison_list_add(&l, 0x200000, 0x200000), 0);
	CHECK_EQ(poison_list_add(&l, 0x3ff000, 0x2000), 1);	/* 0x3ff000 known */
	CHECK_EQ(l.count, 2 + 512 + 1);
	for (i = 1; i < l.count; i++)
		sorted &= l.gpas[i - 1] < l.gpas[i];
	CHECK(sorted, "sorted and unique");

	poison_list_clear(&l);
	CHECK_EQ(l.count, 0);
	CHECK_EQ(poison_list_add(&l, 0x5000, 4096), 1);
	poison_list_free(&l);
}

UNIT_TEST(guest_poison, "guest memory's poisoned pages: add, count, take at reset")
{
	struct guest_poison g = { 0 };
	struct poison_list taken;

	guest_poison_init(&g);
	CHECK_EQ(guest_poison_add(&g, 0x200000, 0x200000), 512);
	CHECK_EQ(guest_poison_add(&g, 0x201000, 4096), 0);	/* the AR after the AO */
	CHECK_EQ(guest_poison_add(&g, 0x5000, 4096), 1);
	CHECK_EQ(guest_poison_count(&g), 513);
	CHECK(guest_poison_contains(&g, 0x3fffff), "contains the extent's last byte");
	CHECK(!guest_poison_contains(&g, 0x400000), "not the page after it");
	/* the reset takes the list, sorted, and the rebooted guest starts with none */
	guest_poison_take(&g, &taken);
	CHECK_EQ(taken.count, 513);
	CHECK_EQ(taken.gpas[0], 0x5000);
	CHECK_EQ(taken.gpas[512], 0x3ff000);
	CHECK_EQ(guest_poison_count(&g), 0);
	CHECK(!guest_poison_contains(&g, 0x5000), "forgotten after the reset");
	CHECK_EQ(guest_poison_add(&g, 0x5000, 4096), 1);
	poison_list_free(&taken);
	poison_list_free(&g.pages);
}
