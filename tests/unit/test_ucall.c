// SPDX-License-Identifier: GPL-2.0
/* The ucall decoder: guest RAM bytes in, a checked copy and its report line out. */
#include <string.h>

#include "hwlab/ucall_decode.h"
#include "unit.h"

#define SLOT_SIZE 4096

/* Two slots back to back in guest-physical space, apart in host memory. */
static uint8_t ram0[SLOT_SIZE], ram1[SLOT_SIZE];

static int decode_at(const struct memslot_table *t, uint32_t gpa, struct ucall_decoded *d)
{
	const struct ucall_context ctx = { .vcpu = 1, .boot = 2, .injected = 1,
					    .last_injected_gpa = 0x523000 };
	uint8_t io[4];

	memcpy(io, &gpa, sizeof(io));
	return ucall_decode(t, io, &ctx, d);
}

/* Write a ucall at gpa, in whichever slot holds it. */
static void put(const struct memslot_table *t, uint32_t gpa, const struct hwlab_ucall *uc)
{
	memcpy(memslot_gpa_to_hva(t, gpa, sizeof(*uc)), uc, sizeof(*uc));
}

#define CHECK_LINE(d, ev, text)							\
	do {									\
		CHECK(!strcmp((d).event, ev), "event %s, expected %s", (d).event, ev);	\
		CHECK(!strcmp((d).members, text), "members %s", (d).members);	\
	} while (0)

UNIT_TEST(ucall, "ucall decoder")
{
	struct memslot_table t = { .count = 2 };
	struct hwlab_ucall uc = { .cmd = UCALL_LOG, .msg = "guest up, \"quoted\"\n" };
	const uint32_t size = sizeof(uc);
	struct ucall_decoded d;

	t.slots[0] = (struct memslot){ .id = 0, .gpa = 0, .size = SLOT_SIZE, .hva = ram0 };
	t.slots[1] = (struct memslot){ .id = 1, .gpa = SLOT_SIZE, .size = SLOT_SIZE, .hva = ram1 };

	CHECK_EQ(size, 144);	/* the GPAs in the messages below depend on it */
	put(&t, 0x100, &uc);
	CHECK_EQ(decode_at(&t, 0x100, &d), 0);
	CHECK_LINE(d, "guest_log",
		   "\"vcpu\":1,\"boot\":2,\"msg\":\"guest up, \\\"quoted\\\"\\u000a\"");

	/* the whole struct must lie in one slot: across the two, or past RAM, is refused */
	CHECK_EQ(decode_at(&t, SLOT_SIZE - size / 2, &d), -1);
	CHECK_LINE(d, "guest_fail", "\"vcpu\":1,\"reason\":\"ucall at bad GPA 0xfb8\"");
	CHECK_EQ(decode_at(&t, SLOT_SIZE - size + 1, &d), -1);
	CHECK_EQ(decode_at(&t, 2 * SLOT_SIZE - size + 1, &d), -1);
	CHECK_EQ(decode_at(&t, 2 * SLOT_SIZE, &d), -1);
	CHECK_EQ(decode_at(&t, 0xffffffff, &d), -1);
	CHECK_LINE(d, "guest_fail", "\"vcpu\":1,\"reason\":\"ucall at bad GPA 0xffffffff\"");
	/* flush against either end of a slot is fine */
	put(&t, SLOT_SIZE - size, &uc);
	CHECK_EQ(decode_at(&t, SLOT_SIZE - size, &d), 0);
	put(&t, 2 * SLOT_SIZE - size, &uc);
	CHECK_EQ(decode_at(&t, 2 * SLOT_SIZE - size, &d), 0);

	/* an unterminated message is cut at UCALL_MSG_LEN - 1 */
	memset(uc.msg, 'A', sizeof(uc.msg));
	put(&t, 0, &uc);
	CHECK_EQ(decode_at(&t, 0, &d), 0);
	CHECK_EQ(strlen(d.uc.msg), UCALL_MSG_LEN - 1);
	CHECK_EQ(ram0[offsetof(struct hwlab_ucall, msg) + UCALL_MSG_LEN - 1], 'A');	/* RAM untouched */

	uc = (struct hwlab_ucall){ .cmd = UCALL_RETIRED, .args = { 0x523000, 1, 0xbd, 0x7, 9 } };
	put(&t, 0x200, &uc);
	CHECK_EQ(decode_at(&t, 0x200, &d), 0);
	CHECK_LINE(d, "guest_retired", "\"vcpu\":1,\"gpa\":\"0x523000\",\"pages\":1,"
		   "\"mci_status\":\"0xbd\",\"mcg_status\":\"0x7\",\"bank\":9,"
		   "\"matches_injection\":true");
	/* a RETIRED for GPA 0 from a vCPU nothing was injected into matches nothing */
	{
		const struct ucall_context none = { .vcpu = 0, .boot = 1 };
		uint8_t io[4] = { 0x00, 0x02, 0, 0 };	/* GPA 0x200 */

		uc.args[0] = 0;
		put(&t, 0x200, &uc);
		CHECK_EQ(ucall_decode(&t, io, &none, &d), 0);
		CHECK(strstr(d.members, "\"gpa\":\"0\"") &&
		      strstr(d.members, "\"matches_injection\":false"), "%s", d.members);
	}

	uc = (struct hwlab_ucall){ .cmd = UCALL_DONE, .args = { 3, 100, 0, 1 } };
	put(&t, 0x200, &uc);
	CHECK_EQ(decode_at(&t, 0x200, &d), 0);
	CHECK_LINE(d, "guest_done", "\"vcpu\":1,\"boot\":2,\"passes\":3,\"pages_checked\":100,"
		   "\"pages_retired\":0,\"errors\":1,\"checksum_ok\":false");

	uc = (struct hwlab_ucall){ .cmd = UCALL_FAIL, .args = { 18, 0x100abc }, .msg = "g.c:7: x" };
	put(&t, 0x200, &uc);
	CHECK_EQ(decode_at(&t, 0x200, &d), 0);
	CHECK_LINE(d, "guest_fail", "\"vcpu\":1,\"reason\":\"g.c:7: x\",\"vector\":18,"
		   "\"rip\":\"0x100abc\",\"mcg_status\":\"0\",\"mci_status\":\"0\"");

	uc = (struct hwlab_ucall){ .cmd = UCALL_MC_BROADCAST,
				   .args = { 0xa000000000000000ULL, 0x5, 1 } };
	put(&t, 0x200, &uc);
	CHECK_EQ(decode_at(&t, 0x200, &d), 0);
	CHECK_LINE(d, "guest_mc_broadcast", "\"vcpu\":1,\"boot\":2,"
		   "\"mci_status\":\"0xa000000000000000\",\"mcg_status\":\"0x5\",\"bank\":1");

	uc = (struct hwlab_ucall){ .cmd = 99 };
	put(&t, 0x200, &uc);
	CHECK_EQ(decode_at(&t, 0x200, &d), -1);
	CHECK_LINE(d, "guest_fail", "\"vcpu\":1,\"reason\":\"unknown ucall 99\"");
}
