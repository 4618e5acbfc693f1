// SPDX-License-Identifier: GPL-2.0
#include <string.h>

#include "memory_failure_event.h"
#include "qmp.h"
#include "unit.h"

/* QMP replies as QEMU 7.2 writes them, and gpa2hva's answers. */
UNIT_TEST(qmp, "QMP replies and gpa2hva")
{
	char s[128];
	uint64_t hva = 0;

	CHECK_EQ(qmp_return_string("{\"return\": \"Host virtual address for 0x19b8000 (pc.ram) is "
				   "0x7f27ab4ad000\\r\\n\"}", s, sizeof(s)), 0);
	CHECK(!strcmp(s, "Host virtual address for 0x19b8000 (pc.ram) is 0x7f27ab4ad000\r\n"),
	      "unescaped: '%s'", s);
	CHECK_EQ(qmp_parse_gpa2hva(s, 0x19b8000, &hva), 0);
	CHECK_EQ(hva, 0x7f27ab4ad000ULL);
	/* the answer must be for the address asked about */
	hva = 1;
	CHECK_EQ(qmp_parse_gpa2hva(s, 0x19b9000, &hva), -1);
	CHECK_EQ(hva, 1);
	/* not RAM, garbage, no address */
	CHECK_EQ(qmp_parse_gpa2hva("Memory at address 0xfee00000 is not RAM\r\n", 0xfee00000, &hva), -1);
	CHECK_EQ(qmp_parse_gpa2hva("Host virtual address for 0x1000 (pc.ram) is \r\n", 0x1000, &hva), -1);
	CHECK_EQ(qmp_parse_gpa2hva("Host virtual address for 0x1000 (pc.ram) is 0x0\r\n", 0x1000, &hva), -1);
	CHECK_EQ(qmp_parse_gpa2hva("Host virtual address for 0x1000 (pc.ram) is 0x12zz\r\n", 0x1000, &hva), -1);
	CHECK_EQ(qmp_parse_gpa2hva("", 0, &hva), -1);
	/* replies that carry no string return */
	CHECK_EQ(qmp_return_string("{\"return\": {}}", s, sizeof(s)), -1);
	CHECK_EQ(qmp_return_string("{\"error\": {\"class\": \"GenericError\", \"desc\": \"x\"}}", s,
				   sizeof(s)), -1);
	CHECK_EQ(qmp_return_string("{\"timestamp\": {}, \"event\": \"STOP\"}", s, sizeof(s)), -1);
	CHECK_EQ(qmp_return_string("{\"return\": \"unterminated", s, sizeof(s)), -1);
	CHECK_EQ(qmp_return_string("{\"return\": \"bad \\q escape\"}", s, sizeof(s)), -1);
	CHECK_EQ(qmp_return_string("{\"return\": \"\\u00", s, sizeof(s)), -1);
	/* too long for the buffer: refused, not cut */
	CHECK_EQ(qmp_return_string("{\"return\": \"0123456789\"}", s, 8), -1);
	CHECK_EQ(qmp_return_string("{\"return\": \"\"}", s, sizeof(s)), 0);
	CHECK_EQ(s[0], 0);
	/* query-cpus-fast as QEMU 7.2 answers it through libvirt: vCPU 0's thread */
	{
		long tid = 0;

		CHECK_EQ(qmp_first_thread_id("{\"return\":[{\"thread-id\":4242,\"props\":{\"core-id\":0,"
					     "\"thread-id\":0},\"qom-path\":\"/machine/unattached/"
					     "device[0]\",\"cpu-index\":0,\"target\":\"x86_64\"}],"
					     "\"id\":\"libvirt-13\"}", &tid), 0);
		CHECK_EQ(tid, 4242);
		tid = 7;
		CHECK_EQ(qmp_first_thread_id("{\"return\":[]}", &tid), -1);
		CHECK_EQ(qmp_first_thread_id("{\"return\":[{\"thread-id\":0}]}", &tid), -1);
		CHECK_EQ(qmp_first_thread_id("{\"return\":[{\"thread-id\":-5}]}", &tid), -1);
		CHECK_EQ(qmp_first_thread_id("{\"return\":[{\"thread-id\":12x}]}", &tid), -1);
		CHECK_EQ(qmp_first_thread_id("{\"return\":[{\"thread-id\":99999999999}]}", &tid), -1);
		CHECK_EQ(tid, 7);
	}
}

/* libvirt's memory-failure event, in the words of hwlab-vmm's sigbus lines */
UNIT_TEST(memory_failure_event, "libvirt memory-failure events as report lines")
{
	char s[512];

	mf_format(s, sizeof(s), "hwlab-qemu", 1, 1, 1, 123);
	CHECK(!strcmp(s, "{\"event\":\"memory_failure\",\"vmm\":\"qemu\",\"domain\":\"hwlab-qemu\","
		      "\"recipient\":\"guest\",\"action\":\"inject\",\"action_required\":true,"
		      "\"recursive\":false,\"t_ns\":123}"), "AR injected: '%s'", s);
	mf_format(s, sizeof(s), "d", 0, 0, 0, 1);
	CHECK(strstr(s, "\"recipient\":\"hypervisor\",\"action\":\"ignore\",\"action_required\":false"),
	      "AO in QEMU's own memory: '%s'", s);
	mf_format(s, sizeof(s), "d", 1, 3, 3, 1);
	CHECK(strstr(s, "\"action\":\"reset\",\"action_required\":true,\"recursive\":true"),
	      "recursive AR: '%s'", s);
	mf_format(s, sizeof(s), "d", 0, 2, 1, 1);
	CHECK(strstr(s, "\"action\":\"fatal\""), "fatal: '%s'", s);
	/* a newer libvirt's numbers are kept, not dropped */
	mf_format(s, sizeof(s), "d", 7, 9, 0, 1);
	CHECK(strstr(s, "\"recipient\":\"unknown:7\",\"action\":\"unknown:9\""), "unknown: '%s'", s);
	/* libvirt allows quotes and backslashes in a name: still one JSON string */
	mf_format(s, sizeof(s), "a\"b\\c\n", 1, 1, 0, 1);
	CHECK(strstr(s, "\"domain\":\"a\\\"b\\\\c\\u000a\""), "escaped: '%s'", s);
}
