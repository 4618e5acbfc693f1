// SPDX-License-Identifier: GPL-2.0
#include <string.h>

#include "qmp.h"
#include "unit.h"

/* QMP replies as QEMU 7.2 writes them, and gpa2hva's answers. */
void test_qmp(void)
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
}
