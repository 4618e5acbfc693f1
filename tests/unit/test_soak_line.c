// SPDX-License-Identifier: GPL-2.0
/* hwpoison-guest --soak's reading of the VMM's report lines */
#include <string.h>

#include "hwpoison_guest.h"
#include "unit.h"

UNIT_TEST(soak_line, "soak: the VMM's report lines read as JSON")
{
	struct soak_line l;

	/* as hwlab-vmm writes them: an AO injection, queued, then its acknowledgement */
	CHECK_EQ(hwpoison_guest_soak_line("{\"event\":\"sigbus\",\"si_code\":\"BUS_MCEERR_AO\","
		"\"hva\":\"0x7f0000000000\",\"gpa\":\"0x600000\",\"lsb\":12,\"pages\":1,"
		"\"recipient\":\"guest\",\"action\":\"inject\",\"action_required\":false,"
		"\"recursive\":false,\"vcpu\":0,\"latency_ns\":2500000,\"signal_t_ns\":1297500000,"
		"\"queued_t_ns\":1298000000,\"mci_status\":\"0xbd000000000000c0\",\"bank\":9,"
		"\"t_ns\":1300000000}\n", &l), SOAK_LINE_INJECT);
	CHECK_EQ(l.gpa, 0x600000);
	CHECK_EQ(l.t_ns, 1300000000);
	CHECK_EQ(l.signal_t_ns, 1297500000);
	CHECK_EQ(l.queued_t_ns, 1298000000);
	CHECK_EQ(l.ar, 0);
	CHECK_EQ(hwpoison_guest_soak_line("{\"event\":\"guest_retired\",\"vcpu\":0,\"gpa\":\"0x700000\","
		"\"pages\":1,\"mci_status\":\"0xbd80000000000134\",\"mcg_status\":\"0x7\",\"bank\":9,"
		"\"matches_injection\":true,\"t_ns\":6619909100}\n", &l), SOAK_LINE_RETIRED);
	CHECK_EQ(l.gpa, 0x700000);
	CHECK_EQ(l.t_ns, 6619909100ULL);
	/* an AR, its gpa a number; no queueing: 0 */
	CHECK_EQ(hwpoison_guest_soak_line("{\"event\":\"sigbus\",\"si_code\":\"BUS_MCEERR_AR\","
		"\"gpa\":4096,\"action\":\"inject\",\"signal_t_ns\":5,\"t_ns\":9}", &l), SOAK_LINE_INJECT);
	CHECK_EQ(l.gpa, 4096);
	CHECK_EQ(l.ar, 1);
	CHECK_EQ(l.queued_t_ns, 0);
	CHECK_EQ(l.signal_t_ns, 5);
	CHECK_EQ(l.t_ns, 9);
	/* not the soak's: another event, a sigbus not injected */
	CHECK_EQ(hwpoison_guest_soak_line("{\"event\":\"poison\",\"gpa\":\"0x1000\"}", &l),
		 SOAK_LINE_OTHER);
	CHECK_EQ(hwpoison_guest_soak_line("{\"event\":\"sigbus\",\"si_code\":\"BUS_MCEERR_AO\","
		"\"gpa\":\"0x1000\",\"action\":\"ignore\"}", &l), SOAK_LINE_OTHER);
	CHECK_EQ(hwpoison_guest_soak_line("vmm: not a report line\n", &l), SOAK_LINE_OTHER);
	CHECK_EQ(hwpoison_guest_soak_line("", &l), SOAK_LINE_OTHER);

	/* members at the top only: nested ones, and words in strings, are not the line's */
	CHECK_EQ(hwpoison_guest_soak_line("{\"event\":\"sigbus\",\"action\":\"ignore\","
		"\"data\":{\"action\":\"inject\"},\"gpa\":\"0x1000\"}", &l), SOAK_LINE_OTHER);
	CHECK_EQ(hwpoison_guest_soak_line("{\"event\":\"poison\",\"data\":{\"event\":"
		"\"guest_retired\"},\"gpa\":\"0x1000\"}", &l), SOAK_LINE_OTHER);
	CHECK_EQ(hwpoison_guest_soak_line("{\"event\":\"sigbus\",\"si_code\":\"BUS_MCEERR_AO\","
		"\"gpa\":\"0x1000\",\"action\":\"inject\",\"t_ns\":7,"
		"\"reason\":\"not BUS_MCEERR_AR\"}", &l), SOAK_LINE_INJECT);
	CHECK_EQ(l.ar, 0);
	CHECK_EQ(hwpoison_guest_soak_line("{\"event\":\"guest_retired\",\"data\":{\"gpa\":\"0x5000\","
		"\"t_ns\":3},\"gpa\":\"0x1000\",\"t_ns\":8}", &l), SOAK_LINE_RETIRED);
	CHECK_EQ(l.gpa, 0x1000);
	CHECK_EQ(l.t_ns, 8);
	/* an escaped name is the same name; a NUL inside a value is not the word */
	CHECK_EQ(hwpoison_guest_soak_line("{\"\\u0065vent\":\"guest_retired\",\"gpa\":\"0x2000\"}", &l),
		 SOAK_LINE_RETIRED);
	CHECK_EQ(hwpoison_guest_soak_line("{\"event\":\"guest_retired\\u0000x\",\"gpa\":\"0x2000\"}",
					  &l), SOAK_LINE_OTHER);
	/* a malformed line, whatever it seems to say, is none of the soak's */
	CHECK_EQ(hwpoison_guest_soak_line("{\"event\":\"guest_retired\",\"gpa\":\"0x2000\",}", &l),
		 SOAK_LINE_OTHER);
}
