// SPDX-License-Identifier: GPL-2.0
#include <string.h>

#include "core/memslot.h"
#include "unit.h"

#define MiB (1ULL << 20)

UNIT_TEST(memslot, "memslot translation")
{
	static uint8_t ram0[1], ram1[1];	/* only addresses are used */
	struct memslot_table t = { .count = 2 };
	uintptr_t h0 = 0x7f0000000000ULL, h1 = 0x7f1000200000ULL;
	struct gpa_extent e;

	(void)ram0;
	(void)ram1;
	t.slots[0] = (struct memslot){ .id = 0, .gpa = 0, .size = 8 * MiB, .hva = (uint8_t *)h0 };
	t.slots[1] = (struct memslot){ .id = 1, .gpa = 8 * MiB, .size = 8 * MiB,
				       .hva = (uint8_t *)h1 };

	/* 4 KiB page inside slot 0 */
	CHECK_EQ(memslot_translate(&t, h0 + 0x123456, 12, &e), 0);
	CHECK_EQ(e.gpa, 0x123000);
	CHECK_EQ(e.len, 4096);
	CHECK(e.slot == &t.slots[0], "slot 0");

	/* first and last byte of a slot */
	CHECK_EQ(memslot_translate(&t, h0, 12, &e), 0);
	CHECK_EQ(e.gpa, 0);
	CHECK_EQ(memslot_translate(&t, h0 + 8 * MiB - 1, 12, &e), 0);
	CHECK_EQ(e.gpa, 8 * MiB - 4096);
	CHECK_EQ(memslot_translate(&t, h1, 12, &e), 0);
	CHECK_EQ(e.gpa, 8 * MiB);
	CHECK(e.slot == &t.slots[1], "slot 1");

	/* one past the end, just before the start, between slots */
	CHECK_EQ(memslot_translate(&t, h0 + 8 * MiB, 12, &e), -1);
	CHECK_EQ(memslot_translate(&t, h0 - 1, 12, &e), -1);
	CHECK_EQ(memslot_translate(&t, h1 + 8 * MiB, 12, &e), -1);
	CHECK_EQ(memslot_translate(&t, 0x1000, 12, &e), -1);

	/* lsb 21: a 2 MiB huge page poisons 512 guest pages */
	CHECK_EQ(memslot_translate(&t, h1 + 0x345000, 21, &e), 0);
	CHECK_EQ(e.gpa, 8 * MiB + 0x200000);
	CHECK_EQ(e.len, 2 * MiB);
	CHECK_EQ(e.len / 4096, 512);

	/* a granule bigger than the slot is clipped to the slot */
	CHECK_EQ(memslot_translate(&t, h0 + 0x5000, 30, &e), 0);
	CHECK_EQ(e.gpa, 0);
	CHECK_EQ(e.len, 8 * MiB);

	/* slot whose HVA is not granule-aligned: clipped at the start */
	t.slots[1].hva = (uint8_t *)(h1 + 0x1000);
	CHECK_EQ(memslot_translate(&t, h1 + 0x1000 + 0x10, 21, &e), 0);
	CHECK_EQ(e.gpa, 8 * MiB);
	CHECK_EQ(e.len, 2 * MiB - 0x1000);

	/* nonsense lsb */
	CHECK_EQ(memslot_translate(&t, h0, 0, &e), -1);
	CHECK_EQ(memslot_translate(&t, h0, 11, &e), -1);
	CHECK_EQ(memslot_translate(&t, h0, 64, &e), -1);

	/* GPA -> HVA */
	CHECK(memslot_gpa_to_hva(&t, 0x1000, 4096) == (void *)(h0 + 0x1000), "gpa 0x1000");
	CHECK(memslot_gpa_to_hva(&t, 8 * MiB - 4096, 4096) != NULL, "last page of slot 0");
	CHECK(memslot_gpa_to_hva(&t, 8 * MiB - 4096, 8192) == NULL, "straddles slots");
	CHECK(memslot_gpa_to_hva(&t, 16 * MiB, 1) == NULL, "beyond RAM");
	CHECK(memslot_gpa_to_hva(&t, ~0ULL, 2) == NULL, "wraps");

	/* backings: their names in the table, their mapping unit, hugetlb or not */
	CHECK(!strcmp(memslot_backing_name(BACKING_HUGETLB), "hugetlb"), "hugetlb");
	CHECK(!strcmp(memslot_backing_name(BACKING_HUGETLB_1G), "hugetlb-1g"), "hugetlb-1g");
	CHECK_EQ(memslot_backing_page_size(BACKING_ANON), 4096);
	CHECK_EQ(memslot_backing_page_size(BACKING_THP), 4096);	/* split: 4 KiB lost */
	CHECK_EQ(memslot_backing_page_size(BACKING_HUGETLB), 2 * MiB);
	CHECK_EQ(memslot_backing_page_size(BACKING_HUGETLB_1G), 1024 * MiB);
	CHECK(!memslot_backing_is_hugetlb(BACKING_THP) && memslot_backing_is_hugetlb(BACKING_HUGETLB) &&
	      memslot_backing_is_hugetlb(BACKING_HUGETLB_1G), "which backings are hugetlb");
}
