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
		CHECK_EQ(qmp_first_thread_id("{\"return\":[{\"thread-id\":1073741824}]}", &tid), -1);
		CHECK_EQ(qmp_first_thread_id("{\"return\":[{\"thread-id\":1e3}]}", &tid), -1);
		CHECK_EQ(qmp_first_thread_id("{\"return\":[{\"thread-id\":\"4242\"}]}", &tid), -1);
		CHECK_EQ(tid, 7);
		/* PID_MAX_LIMIT, the largest tid there can be */
		CHECK_EQ(qmp_first_thread_id("{\"return\":[{\"thread-id\":1073741823}]}", &tid), 0);
		CHECK_EQ(tid, 1073741823);
	}
}

/* QEMU's answers are untrusted: JSON read as JSON, not searched as text */
UNIT_TEST(qmp_hostile, "QMP replies: members at the top only, escapes decoded")
{
	char s[64];
	long tid = 7;

	/* "return" inside an error's data, or in a string, is no return */
	CHECK_EQ(qmp_return_string("{\"error\": {\"class\": \"GenericError\", \"return\": \"0x1\"}}",
				   s, sizeof(s)), -1);
	CHECK_EQ(qmp_return_string("{\"error\": {\"desc\": \"return\"}, \"id\": \"\\\"return\\\": \\\"x\"}",
				   s, sizeof(s)), -1);
	CHECK_EQ(qmp_return_string("{\"id\": {\"return\": \"x\"}, \"return\": \"y\"}", s, sizeof(s)), 0);
	CHECK(!strcmp(s, "y"), "the top-level return: '%s'", s);
	/* every escape, \uXXXX and surrogate pairs as UTF-8 */
	CHECK_EQ(qmp_return_string("{\"return\": \"\\b\\f\\/caf\\u00e9 \\ud83d\\ude00\"}", s, sizeof(s)), 0);
	CHECK(!strcmp(s, "\b\f/caf\xc3\xa9 \xf0\x9f\x98\x80"), "decoded: '%s'", s);
	/* a NUL cannot be handed on in a C string; a lone surrogate is no UTF-8 */
	CHECK_EQ(qmp_return_string("{\"return\": \"a\\u0000b\"}", s, sizeof(s)), -1);
	CHECK_EQ(qmp_return_string("{\"return\": \"\\ud800\"}", s, sizeof(s)), -1);
	/* a line that is not one JSON object */
	CHECK_EQ(qmp_return_string("{\"return\": \"x\"} trailing", s, sizeof(s)), -1);
	CHECK_EQ(qmp_return_string("{\"return\": \"x\",}", s, sizeof(s)), -1);
	CHECK_EQ(qmp_return_string("", s, sizeof(s)), -1);
	CHECK_EQ(qmp_return_string("{\"return\": \"x\"}", s, 0), -1);
	/* QEMU ends its lines with CR LF: the CR is a JSON blank */
	CHECK_EQ(qmp_return_string("{\"return\": \"ok\"}\r", s, sizeof(s)), 0);

	/* messages told apart by their top-level members */
	CHECK_EQ(qmp_message_kind("{\"QMP\": {\"version\": {\"qemu\": {\"micro\": 0, \"minor\": 2, "
				  "\"major\": 7}, \"package\": \"\"}, \"capabilities\": [\"oob\"]}}\r"),
		 QMP_GREETING);
	CHECK_EQ(qmp_message_kind("{\"return\": {}}\r"), QMP_RETURN);
	CHECK_EQ(qmp_message_kind("{\"error\": {\"class\": \"CommandNotFound\", \"desc\": \"x\"}}"),
		 QMP_ERROR);
	CHECK_EQ(qmp_message_kind("{\"timestamp\": {\"seconds\": 1, \"microseconds\": 2}, "
				  "\"event\": \"STOP\"}"), QMP_EVENT);
	/* an event whose data has a "return" or "error" key is still an event */
	CHECK_EQ(qmp_message_kind("{\"event\": \"X\", \"data\": {\"return\": \"y\", \"error\": 1}}"),
		 QMP_EVENT);
	/* "QMP" in an error's text is no greeting; "event" in a return's, no event */
	CHECK_EQ(qmp_message_kind("{\"error\": {\"class\": \"QMP\", \"desc\": \"\\\"QMP\\\"\"}}"),
		 QMP_ERROR);
	CHECK_EQ(qmp_message_kind("{\"return\": {\"event\": \"STOP\"}}"), QMP_RETURN);
	CHECK_EQ(qmp_message_kind("{\"id\": \"\\\"QMP\\\": {}\"}"), QMP_OTHER);
	CHECK_EQ(qmp_message_kind("{\"QMP\": {} \"event\": 1}"), QMP_OTHER);	/* malformed */
	CHECK_EQ(qmp_message_kind("not json"), QMP_OTHER);

	/* vCPU 0's thread-id is the first CPU's own, not the first "thread-id" seen */
	CHECK_EQ(qmp_first_thread_id("{\"return\":[{\"props\":{\"thread-id\":0},\"thread-id\":4242}]}",
				     &tid), 0);
	CHECK_EQ(tid, 4242);
	tid = 7;
	CHECK_EQ(qmp_first_thread_id("{\"return\":[{\"props\":{\"thread-id\":4242}}]}", &tid), -1);
	CHECK_EQ(qmp_first_thread_id("{\"return\":[\"{\\\"thread-id\\\":4242}\"]}", &tid), -1);
	CHECK_EQ(qmp_first_thread_id("{\"return\":{\"thread-id\":4242}}", &tid), -1);
	CHECK_EQ(qmp_first_thread_id("{\"error\":{\"thread-id\":4242}}", &tid), -1);
	CHECK_EQ(qmp_first_thread_id("{\"return\":[{\"thread-id\":\"4242\"}]}", &tid), -1);
	CHECK_EQ(qmp_first_thread_id("{\"return\":[{\"thread-id\":4242.0}]}", &tid), -1);
	CHECK_EQ(qmp_first_thread_id("{\"return\":[{\"thread-id\":4e3}]}", &tid), -1);
	CHECK_EQ(qmp_first_thread_id("{\"return\":[{\"thread-id\":4242}] trailing", &tid), -1);
	CHECK_EQ(tid, 7);
	/* a later CPU's thread is no answer for vCPU 0 */
	CHECK_EQ(qmp_first_thread_id("{\"return\":[{\"cpu-index\":0},{\"thread-id\":4243}]}", &tid), -1);
	CHECK_EQ(tid, 7);
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
