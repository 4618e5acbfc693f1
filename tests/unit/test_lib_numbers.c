// SPDX-License-Identifier: GPL-2.0
/*
 * Every number read from a file, a report line or a peer goes through
 * lib/parse_num.h, as the command line's do: the spellings strtoull() and
 * scanf() took and the kernel never writes (a 0x prefix, a sign, a leading
 * 0 read as octal, trailing bytes) are refused, not read as another number.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "hwpoison_guest.h"
#include "memmap.h"
#include "unit.h"

/* one slot of 8 MiB at 0x7f0000000000 against a one-line maps text */
static int check_one_line(const char *line)
{
	struct memmap m = { .pid = 9, .count = 1 };
	char err[200];
	FILE *f = fmemopen((char *)line, strlen(line), "r");
	int r;

	m.slots[0] = (struct memmap_slot){ 0, 0, 0x800000, 0x7f0000000000ULL, "anon" };
	r = memmap_check_maps(&m, f, RAM_RULE_QEMU, err, sizeof(err));
	fclose(f);
	return r;
}

UNIT_TEST(numbers_proc_maps, "numbers: /proc/PID/maps fields in the kernel's spelling only")
{
	/* as the kernel writes it, and with a path, and padded wider */
	CHECK_EQ(check_one_line("7f0000000000-7f0000800000 rw-p 00000000 00:00 0\n"), 0);
	CHECK_EQ(check_one_line("7f0000000000-7f0000800000 rw-p 00000000 00:0f 33001 "
				"                 /anon_hugepage (deleted)\n"), 0);
	CHECK_EQ(check_one_line("7F0000000000-7F0000800000 rw-p 00000000 00:00 0\n"), 0);
	CHECK_EQ(check_one_line("007f0000000000-007f0000800000 rw-p 00000000 00:00 0"), 0);
	CHECK_EQ(check_one_line(" 7f0000000000-7f0000800000  rw-p 00000000 00:00 0\n"), 0);
	/* what sscanf's %x and %lu took */
	CHECK_EQ(check_one_line("0x7f0000000000-0x7f0000800000 rw-p 00000000 00:00 0\n"), -1);
	CHECK_EQ(check_one_line("+7f0000000000-7f0000800000 rw-p 00000000 00:00 0\n"), -1);
	CHECK_EQ(check_one_line("7f0000000000-7f0000800000 rw-p 00000000 00:00 00\n"), -1);
	CHECK_EQ(check_one_line("7f0000000000-7f0000800000 rw-p 00000000 00:00 0x0\n"), -1);
	CHECK_EQ(check_one_line("7f0000000000-7f0000800000 rw-p -0000001 00:00 0\n"), -1);
	CHECK_EQ(check_one_line("7f0000000000-7f0000800000 rw-p 00000000 00:-0 0\n"), -1);
	CHECK_EQ(check_one_line("7f0000000000-17f0000000000000000 rw-p 00000000 00:00 0\n"), -1);
	CHECK_EQ(check_one_line("7f0000000000-7f0000800000 rw-p 00000000 00:00 0x\n"), -1);
	CHECK_EQ(check_one_line("7f0000000000-7f0000800000 rw-p 0000000g 00:00 0\n"), -1);
	CHECK_EQ(check_one_line("7f0000000000-7f0000800000 rw-p 00000000 00 0\n"), -1);
	CHECK_EQ(check_one_line("7f0000000000-7f0000800000 rw-p 00000000 00:00\n"), -1);
	CHECK_EQ(check_one_line("7f0000000000-7f0000800000 rwxp 00000000 00:00 0\n"), 0);
	CHECK_EQ(check_one_line("7f0000000000-7f0000800000 rw-pp 00000000 00:00 0\n"), -1);
}

UNIT_TEST(numbers_proc_stat_status, "numbers: /proc/PID/stat and status fields, decimal and whole")
{
	unsigned long long t = 5;
	uint64_t v = 7;
	static const char status[] = "Name:\tqemu-system-x86\nUmask:\t0022\nState:\tS (sleeping)\n"
				     "Tgid:\t4242\nNgid:\t0\nPid:\t4250\nPPid:\t1\n";

	CHECK_EQ(proc_stat_start_time("42 (x) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 "
				      "0777 0", &t), -1);	/* no leading zero: not octal */
	CHECK_EQ(proc_stat_start_time("42 (x) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 "
				      "18446744073709551616 0", &t), -1);	/* past 64 bits */
	CHECK_EQ(proc_stat_start_time("42 (x) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 "
				      "0 0", &t), 0);
	CHECK_EQ(t, 0);
	CHECK_EQ(proc_status_field(status, "Tgid", INT32_MAX, &v), 0);
	CHECK_EQ(v, 4242);
	CHECK_EQ(proc_status_field(status, "Pid", INT32_MAX, &v), 0);
	CHECK_EQ(v, 4250);
	CHECK_EQ(proc_status_field(status, "Ngid", INT32_MAX, &v), 0);
	CHECK_EQ(v, 0);
	v = 7;
	CHECK_EQ(proc_status_field(status, "Tg", INT32_MAX, &v), -1);	/* a whole name */
	CHECK_EQ(proc_status_field(status, "Absent", INT32_MAX, &v), -1);
	CHECK_EQ(proc_status_field(status, "Name", INT32_MAX, &v), -1);
	CHECK_EQ(proc_status_field(status, "Umask", INT32_MAX, &v), -1);	/* octal: not ours */
	CHECK_EQ(proc_status_field("Tgid:\t-1\n", "Tgid", INT32_MAX, &v), -1);
	CHECK_EQ(proc_status_field("Tgid:\t12x\n", "Tgid", INT32_MAX, &v), -1);
	CHECK_EQ(proc_status_field("Tgid:\t4294967297\n", "Tgid", INT32_MAX, &v), -1);
	CHECK_EQ(proc_status_field("Tgid:\t\n", "Tgid", INT32_MAX, &v), -1);
	CHECK_EQ(v, 7);
	CHECK_EQ(proc_status_field("Tgid:  99", "Tgid", INT32_MAX, &v), 0);
	CHECK_EQ(v, 99);
}

UNIT_TEST(numbers_soak_line, "numbers: a report line's gpa and times by the command line's rule")
{
	struct soak_line l;

	/* a leading 0 is not octal: 0612000 was GPA 0x31400, another page */
	CHECK_EQ(hwpoison_guest_soak_line("{\"event\":\"guest_retired\",\"gpa\":\"0612000\","
					  "\"t_ns\":5}", &l), SOAK_LINE_RETIRED);
	CHECK_EQ(l.gpa, 0);
	CHECK_EQ(l.t_ns, 5);
	CHECK_EQ(hwpoison_guest_soak_line("{\"event\":\"guest_retired\",\"gpa\":\"-1\","
					  "\"t_ns\":\"12abc\"}", &l), SOAK_LINE_RETIRED);
	CHECK_EQ(l.gpa, 0);
	CHECK_EQ(l.t_ns, 0);
	CHECK_EQ(hwpoison_guest_soak_line("{\"event\":\"guest_retired\",\"gpa\":\" 0x1000\","
					  "\"t_ns\":1e3}", &l), SOAK_LINE_RETIRED);
	CHECK_EQ(l.gpa, 0);
	CHECK_EQ(l.t_ns, 0);
	CHECK_EQ(hwpoison_guest_soak_line("{\"event\":\"guest_retired\",\"gpa\":\"0x612000\","
					  "\"t_ns\":18446744073709551615}", &l), SOAK_LINE_RETIRED);
	CHECK_EQ(l.gpa, 0x612000);
	CHECK_EQ(l.t_ns, UINT64_MAX);
	CHECK_EQ(hwpoison_guest_soak_line("{\"event\":\"guest_retired\",\"gpa\":0,"
					  "\"t_ns\":18446744073709551616}", &l), SOAK_LINE_RETIRED);
	CHECK_EQ(l.gpa, 0);
	CHECK_EQ(l.t_ns, 0);	/* past 64 bits: not saturated to 2^64-1 */
}
