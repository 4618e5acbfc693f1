// SPDX-License-Identifier: GPL-2.0
/*
 * lib/: number parsing and the memslot table format shared by the VMM and the
 * tools (the table's files: test_memmap_file.c).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "memmap.h"
#include "parse_num.h"
#include "unit.h"

static void test_parse_u64(void)
{
	uint64_t v = 7;

	CHECK_EQ(parse_u64("0x9ff000", UINT64_MAX, &v), 0);
	CHECK_EQ(v, 0x9ff000);
	CHECK_EQ(parse_u64("4194304", 4194304, &v), 0);
	CHECK_EQ(v, 4194304);
	v = 7;
	CHECK_EQ(parse_u64("4294967297", 4194304, &v), -1);	/* no wrap to pid 1 */
	CHECK_EQ(parse_u64("-1", UINT64_MAX, &v), -1);		/* no wrap to 2^64-1 */
	CHECK_EQ(parse_u64("", UINT64_MAX, &v), -1);		/* empty is not 0 */
	CHECK_EQ(parse_u64(" 5", UINT64_MAX, &v), -1);
	CHECK_EQ(parse_u64("5x", UINT64_MAX, &v), -1);
	CHECK_EQ(parse_u64("18446744073709551616", UINT64_MAX, &v), -1);
	CHECK_EQ(parse_u64("0612000", UINT64_MAX, &v), -1);	/* not octal 0x32400 */
	CHECK_EQ(parse_u64("0x", UINT64_MAX, &v), -1);
	CHECK_EQ(parse_u64("0x-1", UINT64_MAX, &v), -1);
	CHECK_EQ(parse_u64("0x 5", UINT64_MAX, &v), -1);
	CHECK_EQ(parse_u64("0", UINT64_MAX, &v), 0);
	CHECK_EQ(v, 0);
	CHECK_EQ(parse_u64("0X1F", UINT64_MAX, &v), 0);
	CHECK_EQ(v, 0x1f);
	CHECK_EQ(parse_u64("0612000", UINT64_MAX, &v), -1);
	CHECK_EQ(v, 0x1f);					/* untouched on error */
	CHECK_EQ(parse_u64("9", 5, &v), -1);			/* one digit past max */
	CHECK_EQ(parse_u64("0x10", 15, &v), -1);
	CHECK_EQ(parse_u64("0xf", 15, &v), 0);
	CHECK_EQ(v, 15);
	CHECK_EQ(parse_u64("0xffffffffffffffff", UINT64_MAX, &v), 0);
	CHECK_EQ(v, UINT64_MAX);
	CHECK_EQ(parse_u64("0x00000000000000001", UINT64_MAX, &v), 0);	/* padded, not past */
	CHECK_EQ(v, 1);
	CHECK_EQ(parse_u64("18446744073709551615", UINT64_MAX, &v), 0);
	CHECK_EQ(v, UINT64_MAX);
	CHECK_EQ(parse_u64("+5", UINT64_MAX, &v), -1);
	CHECK_EQ(parse_u64("00x1000", UINT64_MAX, &v), -1);
	CHECK_EQ(parse_u64(NULL, UINT64_MAX, &v), -1);
}

/* a kernel file's field: fixed base, no prefix, hex zero-padded, decimal not */
static void test_parse_field_u64(void)
{
	uint64_t v = 7;

	CHECK_EQ(parse_field_u64("7f0000001000-", 12, 16, UINT64_MAX, &v), 0);
	CHECK_EQ(v, 0x7f0000001000);
	CHECK_EQ(parse_field_u64("00400000", 8, 16, UINT64_MAX, &v), 0);
	CHECK_EQ(v, 0x400000);
	CHECK_EQ(parse_field_u64("ffffffffffffffff", 16, 16, UINT64_MAX, &v), 0);
	CHECK_EQ(v, UINT64_MAX);
	CHECK_EQ(parse_field_u64("12345 ", 5, 10, UINT64_MAX, &v), 0);
	CHECK_EQ(v, 12345);
	CHECK_EQ(parse_field_u64("0", 1, 10, UINT64_MAX, &v), 0);
	CHECK_EQ(v, 0);
	v = 7;
	CHECK_EQ(parse_field_u64("10000000000000000", 17, 16, UINT64_MAX, &v), -1);
	CHECK_EQ(parse_field_u64("0x1000", 6, 16, UINT64_MAX, &v), -1);	/* no prefix */
	CHECK_EQ(parse_field_u64("-1", 2, 16, UINT64_MAX, &v), -1);
	CHECK_EQ(parse_field_u64(" 1", 2, 10, UINT64_MAX, &v), -1);
	CHECK_EQ(parse_field_u64("0612000", 7, 10, UINT64_MAX, &v), -1);	/* no octal */
	CHECK_EQ(parse_field_u64("12a", 3, 10, UINT64_MAX, &v), -1);
	CHECK_EQ(parse_field_u64("", 0, 10, UINT64_MAX, &v), -1);
	CHECK_EQ(parse_field_u64("256", 3, 10, 255, &v), -1);
	CHECK_EQ(parse_field_u64("10", 2, 8, UINT64_MAX, &v), -1);	/* 10 or 16 only */
	CHECK_EQ(v, 7);
}

static void test_memmap_round_trip(void)
{
	struct memmap out = { .pid = 4242, .start = 99887766, .count = 2 }, in;
	char buf[512], err[128];
	FILE *f;

	out.slots[0] = (struct memmap_slot){ 0, 0, 0x800000, 0x7f0000000000ULL, "anon" };
	out.slots[1] = (struct memmap_slot){ 1, 0x800000, 0x800000, 0x7f1000000000ULL, "hugetlb" };
	f = fmemopen(buf, sizeof(buf), "w");
	CHECK_EQ(memmap_write(f, &out), 0);
	fclose(f);
	/* the exact text: scenarios read it with sed */
	CHECK(strstr(buf, "# pid 4242 start 99887766\n") == buf, "header first: %s", buf);
	CHECK(strstr(buf, "\n1 0x800000 0x800000 0x7f1000000000 hugetlb\n") != NULL, "%s", buf);

	f = fmemopen(buf, strlen(buf), "r");
	CHECK_EQ(memmap_read(f, &in, err, sizeof(err)), 0);
	fclose(f);
	CHECK_EQ(in.pid, 4242);
	CHECK_EQ(in.start, 99887766);
	CHECK_EQ(in.count, 2);
	CHECK_EQ(in.slots[1].hva, 0x7f1000000000ULL);
	CHECK(!strcmp(in.slots[1].backing, "hugetlb"), "backing %s", in.slots[1].backing);
	CHECK(memmap_find_gpa(&in, 0x9ff000) == &in.slots[1], "GPA in slot 1");
	/* the 1 GiB hugetlb backing's name is one the tools read back */
	out.slots[1] = (struct memmap_slot){ 1, 0x40000000, 0x40000000, 0x7f1000000000ULL,
					     "hugetlb-1g" };
	f = fmemopen(buf, sizeof(buf), "w");
	CHECK_EQ(memmap_write(f, &out), 0);
	fclose(f);
	f = fmemopen(buf, strlen(buf), "r");
	CHECK_EQ(memmap_read(f, &in, err, sizeof(err)), 0);
	fclose(f);
	CHECK(!strcmp(in.slots[1].backing, "hugetlb-1g"), "backing %s", in.slots[1].backing);
	CHECK(memmap_find_gpa(&in, 0x1000000) == NULL, "GPA past RAM");

	f = fmemopen((char *)"# pid 1 start 2\n0 0 zero 0x1000 anon\n", 36, "r");
	CHECK_EQ(memmap_read(f, &in, err, sizeof(err)), -1);
	CHECK(strstr(err, "line 2") != NULL, "names the bad line: %s", err);
	fclose(f);
	f = fmemopen((char *)"# pid 1 start 2\n", 16, "r");
	CHECK_EQ(memmap_read(f, &in, err, sizeof(err)), -1);
	fclose(f);
}

static int read_text(const char *text, struct memmap *m, char *err, size_t errlen)
{
	FILE *f = fmemopen((char *)text, strlen(text), "r");
	int r = memmap_read(f, m, err, errlen);

	fclose(f);
	return r;
}

/* What sscanf() used to let through; each must be refused, naming its line. */
static void test_memmap_strict(void)
{
	static const struct {
		const char *text, *want;
	} bad[] = {
		{ "# pid 4294967297 start 1\n0 0 0x1000 0x7f0000000000 anon\n", "line 1" },
		{ "# pid 12abc start 1\n0 0 0x1000 0x7f0000000000 anon\n", "line 1" },
		{ "# pid -1 start 1\n0 0 0x1000 0x7f0000000000 anon\n", "line 1" },
		{ "# pid 0 start 1\n0 0 0x1000 0x7f0000000000 anon\n", "line 1" },
		{ "# pid 7 start 1\n# pid 8 start 1\n0 0 0x1000 0x7f0000000000 anon\n", "line 2" },
		/* no start time: such a table cannot be tied to the process that wrote it */
		{ "# pid 7\n0 0 0x1000 0x7f0000000000 anon\n", "line 1" },
		{ "# pid 7 start\n0 0 0x1000 0x7f0000000000 anon\n", "line 1" },
		{ "# pid 7 start \n0 0 0x1000 0x7f0000000000 anon\n", "line 1" },
		{ "# pid 7 start -1\n0 0 0x1000 0x7f0000000000 anon\n", "line 1" },
		{ "# pid 7 start 12x\n0 0 0x1000 0x7f0000000000 anon\n", "line 1" },
		{ "# pid 7 start 1 2\n0 0 0x1000 0x7f0000000000 anon\n", "line 1" },
		{ "# pid 7 start 18446744073709551616\n0 0 0x1000 0x7f0000000000 anon\n", "line 1" },
		{ "# pid 7  start 1\n0 0 0x1000 0x7f0000000000 anon\n", "line 1" },
		{ "# pid 7 begin 1\n0 0 0x1000 0x7f0000000000 anon\n", "line 1" },
		{ "# pid 7 start 1\n0 0 0x1000 0x7f0000000000 anon garbage\n", "line 2" },
		{ "# pid 7 start 1\n0 0 0x1000 0x7f0000000000junk anon\n", "line 2" },
		{ "# pid 7 start 1\n4294967296 0 0x1000 0x7f0000000000 anon\n", "line 2" },
		{ "# pid 7 start 1\n0 0 0x10000000000000000 0x7f0000000000 anon\n", "line 2" },
		{ "# pid 7 start 1\n0 -1 0x1000 0x7f0000000000 anon\n", "line 2" },
		{ "# pid 7 start 1\n0 0 0 0x7f0000000000 anon\n", "line 2" },		/* empty slot */
		{ "# pid 7 start 1\n0 0xfffffffffffff000 0x2000 0x7f0000000000 anon\n", "line 2" },
		{ "# pid 7 start 1\n0 0 0x2000 0xfffffffffffff000 anon\n", "line 2" },
		{ "# pid 7 start 1\n0 0 0x1000 0x7f0000000000 floppy\n", "line 2" },
		{ "# pid 7 start 1\n0 0 0x1000 0x7f0000000000\n", "line 2" },
		{ "# pid 7 start 1\n0 0 0x2000 0x7f0000000000 anon\n1 0x1000 0x1000 0x7f1000000000 anon\n",
		  "line 3" },						/* overlaps slot 0 */
		{ "0 0 0x1000 0x7f0000000000 anon\n", "no '# pid N start T' header" },
	};
	struct memmap m;
	char err[200];
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		CHECK_EQ(read_text(bad[i].text, &m, err, sizeof(err)), -1);
		CHECK(strstr(err, bad[i].want) != NULL, "row %u: '%s' in '%s'", i, bad[i].want, err);
	}
	CHECK_EQ(read_text("# pid 4194304 start 0\n# slot gpa size hva backing\n\n"
			   "0 0 0x1000 0x7f0000000000 thp", &m, err, sizeof(err)), 0);
	CHECK_EQ(m.pid, 4194304);
	CHECK_EQ(m.start, 0);
	CHECK_EQ(read_text("# pid 7 start 18446744073709551615\n0 0 0x1000 0x7f0000000000 anon",
			   &m, err, sizeof(err)), 0);
	CHECK_EQ(m.start, 18446744073709551615ULL);
	CHECK_EQ(m.slots[0].size, 0x1000);
}

/* A fake /proc/PID/maps: the slots must lie in writable mappings, gap-free. */
static void test_memmap_check_maps(void)
{
	static const char maps[] =
		"00400000-00452000 r-xp 00000000 08:02 173521 /usr/bin/hwlab-vmm\n"
		"7f0000000000-7f0000800000 rw-p 00000000 00:00 0\n"
		"7f0000800000-7f0001000000 rw-p 00000000 00:00 0\n"
		"7f1000000000-7f1000400000 rw-p 00000000 00:00 0\n"
		"7f1000500000-7f1000800000 rw-p 00000000 00:00 0\n"
		"7f2000000000-7f2000800000 r--p 00000000 00:00 0\n"
		/* writable, mapped once, and not guest RAM: the VMM's .data, kvm_run */
		"7f4000000000-7f4000003000 rw-p 000e0000 08:02 173521 /usr/bin/hwlab-vmm\n"
		"7f5000000000-7f5000003000 rw-s 00000000 00:0e 1052 anon_inode:kvm-vcpu:0\n"
		"7f6000000000-7f6000400000 rw-s 00000000 00:01 2048 /dev/zero (deleted)\n"
		"7f7000000000-7f7000400000 rw-p 00000000 00:0f 33001 /anon_hugepage (deleted)\n";
	struct memmap m = { .pid = 9, .count = 1 };
	char err[200];
	FILE *f = fmemopen((char *)maps, sizeof(maps) - 1, "r");

	/* across two adjacent writable mappings (a remapped page splits one) */
	m.slots[0] = (struct memmap_slot){ 0, 0, 0x1000000, 0x7f0000000000ULL, "anon" };
	CHECK_EQ(memmap_check_maps(&m, f, RAM_RULE_QEMU, err, sizeof(err)), 0);
	m.slots[0].hva = 0x400000;				/* the VMM's own text */
	m.slots[0].size = 0x1000;
	CHECK_EQ(memmap_check_maps(&m, f, RAM_RULE_QEMU, err, sizeof(err)), -1);
	CHECK(strstr(err, "not inside private anonymous writable mappings of pid 9") != NULL,
	      "%s", err);
	m.slots[0].hva = 0x7f4000000000ULL;			/* the VMM's .data */
	CHECK_EQ(memmap_check_maps(&m, f, RAM_RULE_QEMU, err, sizeof(err)), -1);
	m.slots[0].hva = 0x7f5000000000ULL;			/* a vCPU's kvm_run */
	CHECK_EQ(memmap_check_maps(&m, f, RAM_RULE_QEMU, err, sizeof(err)), -1);
	m.slots[0].hva = 0x7f6000000000ULL;			/* shared anonymous */
	CHECK_EQ(memmap_check_maps(&m, f, RAM_RULE_QEMU, err, sizeof(err)), -1);
	m.slots[0].hva = 0x7f7000000000ULL;			/* private hugetlb: guest RAM */
	CHECK_EQ(memmap_check_maps(&m, f, RAM_RULE_QEMU, err, sizeof(err)), 0);
	m.slots[0] = (struct memmap_slot){ 0, 0, 0x800000, 0x7f1000000000ULL, "anon" };
	CHECK_EQ(memmap_check_maps(&m, f, RAM_RULE_QEMU, err, sizeof(err)), -1);	/* a hole */
	m.slots[0].hva = 0x7f2000000000ULL;				/* read-only */
	CHECK_EQ(memmap_check_maps(&m, f, RAM_RULE_QEMU, err, sizeof(err)), -1);
	m.slots[0].hva = 0x7f3000000000ULL;				/* nothing there */
	CHECK_EQ(memmap_check_maps(&m, f, RAM_RULE_QEMU, err, sizeof(err)), -1);
	m.slots[0] = (struct memmap_slot){ 0, 0, 0x1000000, 0x7f0000000000ULL, "anon" };
	m.slots[1] = (struct memmap_slot){ 1, 0x1000000, 0x1000, 0x7f2000000000ULL, "anon" };
	m.count = 2;						/* the second slot is bad */
	CHECK_EQ(memmap_check_maps(&m, f, RAM_RULE_QEMU, err, sizeof(err)), -1);
	CHECK(strstr(err, "slot 1:") != NULL, "%s", err);
	fclose(f);
}

/*
 * A fake /proc/PID/smaps: a private mapping of a hugetlbfs file (QEMU's
 * memory-backend-file for a libvirt <hugepages/> guest) is guest RAM by its
 * VmFlags "ht"; a private mapping of any other file, or a shared hugetlb
 * one, is not.
 */
static void test_memmap_check_smaps(void)
{
	static const char smaps[] =
		"7f0000000000-7f0008000000 rw-p 00000000 00:2d 4711 "
		"/dev/hugepages/libvirt/qemu/1-d/qemu_back_mem.pc.ram.Xy12 (deleted)\n"
		"Size:             131072 kB\n"
		"KernelPageSize:     2048 kB\n"
		"AnonHugePages:         0 kB\n"
		"VmFlags: rd wr mr mw me de ht sd\n"
		"7f1000000000-7f1000200000 rw-p 00000000 08:02 1234 /var/lib/guest.img\n"
		"Size:               2048 kB\n"
		"VmFlags: rd wr mr mw me ac sd hta\n"
		"7f2000000000-7f2000200000 rw-s 00000000 00:2d 4712 /dev/hugepages/shared\n"
		"VmFlags: rd wr sh mr mw me ms de ht sd\n"
		"7f3000000000-7f3000200000 rw-p 00000000 00:00 0\n"
		"VmFlags: rd wr mr mw me ac sd\n";
	static const char garbage[] =
		"7f3000000000-7f3000200000 rw-p 00000000 00:00 0\n"
		"not a key or a mapping\n";
	struct memmap m = { .pid = 9, .count = 1 };
	char err[200];
	FILE *f = fmemopen((char *)smaps, sizeof(smaps) - 1, "r");

	m.slots[0] = (struct memmap_slot){ 0, 0, 0x8000000, 0x7f0000000000ULL, "hugetlbfs" };
	CHECK_EQ(memmap_check_maps(&m, f, RAM_RULE_QEMU, err, sizeof(err)), 0);
	m.slots[0].hva = 0x7f1000000000ULL;		/* a private file, "hta" is not "ht" */
	m.slots[0].size = 0x1000;
	CHECK_EQ(memmap_check_maps(&m, f, RAM_RULE_QEMU, err, sizeof(err)), -1);
	m.slots[0].hva = 0x7f2000000000ULL;		/* shared hugetlbfs */
	CHECK_EQ(memmap_check_maps(&m, f, RAM_RULE_QEMU, err, sizeof(err)), -1);
	m.slots[0].hva = 0x7f3000000000ULL;		/* anonymous, the last mapping */
	CHECK_EQ(memmap_check_maps(&m, f, RAM_RULE_QEMU, err, sizeof(err)), 0);
	fclose(f);
	f = fmemopen((char *)garbage, sizeof(garbage) - 1, "r");
	CHECK_EQ(memmap_check_maps(&m, f, RAM_RULE_QEMU, err, sizeof(err)), -1);
	fclose(f);
}

/*
 * hwlab-vmm's guest RAM is marked (VmFlags "dd", and the name where the
 * kernel has anon VMA names): an unnamed anonymous mapping such as a static
 * VMM's .bss, its heap or a thread's stack is not guest RAM. Hugetlb RAM
 * cannot be named: "/anon_hugepage (deleted)" with "ht" and "dd".
 */
static void test_memmap_check_hwlab(void)
{
	static const char smaps[] =	/* ascending, as the kernel writes it */
		/* 0x4ed: the static VMM's .bss, and its heap: unmarked */
		"004ed000-00504000 rw-p 00000000 00:00 0\n"
		"VmFlags: rd wr mr mw me ac\n"
		"17bcb000-17bed000 rw-p 00000000 00:00 0 [heap]\n"
		"VmFlags: rd wr mr mw me ac\n"
		/* 0x7f0: named, dd: guest RAM; a remapped page split it in two */
		"7f0000000000-7f0000001000 rw-p 00000000 00:00 0 [anon:hwlab-guest-ram]\n"
		"VmFlags: rd wr mr mw me ac dd\n"
		"7f0000001000-7f0000002000 rw-p 00000000 00:00 0 [anon:hwlab-guest-ram]\n"
		"VmFlags: rd wr mr mw me ac dd\n"
		/* 0x7f1: unnamed with dd (a kernel without anon VMA names) */
		"7f1000000000-7f1000001000 rw-p 00000000 00:00 0\n"
		"VmFlags: rd wr mr mw me ac dd\n"
		/* 0x7f2: named but without dd; 0x7f3: dd but another name */
		"7f2000000000-7f2000001000 rw-p 00000000 00:00 0 [anon:hwlab-guest-ram]\n"
		"VmFlags: rd wr mr mw me ac\n"
		"7f3000000000-7f3000001000 rw-p 00000000 00:00 0 [anon:hwlab-guest-ramx]\n"
		"VmFlags: rd wr mr mw me ac dd\n"
		/* 0x7f4: MAP_HUGETLB with dd; 0x7f5: without */
		"7f4000000000-7f4000200000 rw-p 00000000 00:0f 33001 /anon_hugepage (deleted)\n"
		"VmFlags: rd wr mr mw me de ht dd\n"
		"7f5000000000-7f5000200000 rw-p 00000000 00:0f 33002 /anon_hugepage (deleted)\n"
		"VmFlags: rd wr mr mw me de ht\n"
		/* 0x7f6: dd, shared; 0x7f7: dd, a hugetlbfs file (QEMU's, not ours) */
		"7f6000000000-7f6000001000 rw-s 00000000 00:00 0 [anon_shmem:hwlab-guest-ram]\n"
		"VmFlags: rd wr sh mr mw me dd\n"
		"7f7000000000-7f7000200000 rw-p 00000000 00:2d 4711 /dev/hugepages/x (deleted)\n"
		"VmFlags: rd wr mr mw me de ht dd\n"
		/* 0x7f8: dd, unnamed, 1 MiB: an ASan build's shadow memory is so */
		"7f8000000000-7f8000100000 rw-p 00000000 00:00 0\n"
		"VmFlags: rd wr mr mw me ac dd nh\n"
		/*
		 * 0x7f9: --backing hugetlb-shared, the VMM's memfd with ht and dd;
		 * 0x7fa: the same without dd; 0x7fb: another memfd name; 0x7fc:
		 * the name on a shared mapping that is not hugetlb: --backing shmem
		 */
		"7f9000000000-7f9000200000 rw-s 00000000 00:0f 5001 /memfd:hwlab-guest-ram (deleted)\n"
		"VmFlags: rd wr sh mr mw me ms de ht dd\n"
		"7fa000000000-7fa000200000 rw-s 00000000 00:0f 5002 /memfd:hwlab-guest-ram (deleted)\n"
		"VmFlags: rd wr sh mr mw me ms de ht\n"
		"7fb000000000-7fb000200000 rw-s 00000000 00:0f 5003 /memfd:hwlab-guest-rom (deleted)\n"
		"VmFlags: rd wr sh mr mw me ms de ht dd\n"
		"7fc000000000-7fc000200000 rw-s 00000000 00:01 5004 /memfd:hwlab-guest-ram (deleted)\n"
		"VmFlags: rd wr sh mr mw me ms dd\n";
	static const struct {
		uint64_t hva, size;
		int qemu, hwlab, named;	/* 0 accepted, -1 refused, by each rule */
		const char *backing;	/* the slot's; NULL: anon */
	} rows[] = {
		{ 0x7f0000000000ULL, 0x2000, -1, -1, 0, NULL },
		{ 0x4ed000, 0x1000, 0, -1, -1, NULL },		/* .bss: QEMU's rule took it */
		{ 0x17bcb000, 0x1000, -1, -1, -1, NULL },		/* [heap] */
		{ 0x7f1000000000ULL, 0x1000, 0, 0, -1, NULL },
		{ 0x7f2000000000ULL, 0x1000, -1, -1, -1, NULL },
		{ 0x7f3000000000ULL, 0x1000, -1, -1, -1, NULL },
		{ 0x7f4000000000ULL, 0x200000, 0, 0, 0, NULL },
		{ 0x7f5000000000ULL, 0x200000, 0, -1, -1, NULL },
		{ 0x7f6000000000ULL, 0x1000, -1, -1, -1, NULL },
		{ 0x7f7000000000ULL, 0x200000, 0, -1, -1, NULL },
		/*
		 * a page of a larger marked mapping is not a slot of guest RAM:
		 * a table pointing into ASan's shadow passed on a kernel without
		 * names; the whole mapping as the slot would be
		 */
		{ 0x7f8000010000ULL, 0x1000, 0, -1, -1, NULL },
		{ 0x7f8000000000ULL, 0x100000, 0, 0, -1, NULL },
		{ 0x7f4000000000ULL, 0x1000, 0, -1, -1, NULL },
		/*
		 * the shared memfd: hwlab-vmm's rules only, only all of it, and
		 * only for a slot of its kind (hugetlb: hugetlb-shared; tmpfs: shmem)
		 */
		{ 0x7f9000000000ULL, 0x200000, -1, 0, 0, "hugetlb-shared" },
		{ 0x7f9000000000ULL, 0x200000, -1, -1, -1, "shmem" },
		{ 0x7f9000000000ULL, 0x200000, -1, -1, -1, NULL },
		{ 0x7fa000000000ULL, 0x200000, -1, -1, -1, "hugetlb-shared" },
		{ 0x7fb000000000ULL, 0x200000, -1, -1, -1, "hugetlb-shared" },
		{ 0x7fc000000000ULL, 0x200000, -1, 0, 0, "shmem" },
		{ 0x7fc000000000ULL, 0x200000, -1, -1, -1, "hugetlb-shared" },
		{ 0x7fc000000000ULL, 0x200000, -1, -1, -1, NULL },
	};
	struct memmap m = { .pid = 9, .count = 1 };
	char err[300];
	unsigned int i;
	FILE *f = fmemopen((char *)smaps, sizeof(smaps) - 1, "r");

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		m.slots[0] = (struct memmap_slot){ 0, 0, rows[i].size, rows[i].hva, "anon" };
		if (rows[i].backing)
			snprintf(m.slots[0].backing, sizeof(m.slots[0].backing), "%s",
				 rows[i].backing);
		CHECK(memmap_check_maps(&m, f, RAM_RULE_QEMU, err, sizeof(err)) == rows[i].qemu,
		      "row %u, QEMU's rule", i);
		CHECK(memmap_check_maps(&m, f, RAM_RULE_HWLAB, err, sizeof(err)) == rows[i].hwlab,
		      "row %u, hwlab-vmm's rule", i);
		CHECK(memmap_check_maps(&m, f, RAM_RULE_HWLAB_NAMED, err, sizeof(err)) ==
		      rows[i].named, "row %u, hwlab-vmm's rule with names", i);
	}
	/* two slots that together are one marked mapping: each is guest RAM */
	m.count = 2;
	m.slots[0] = (struct memmap_slot){ 0, 0, 0x80000, 0x7f8000000000ULL, "anon" };
	m.slots[1] = (struct memmap_slot){ 1, 0x80000, 0x80000, 0x7f8000080000ULL, "anon" };
	CHECK_EQ(memmap_check_maps(&m, f, RAM_RULE_HWLAB, err, sizeof(err)), 0);
	m.slots[1].size = 0x40000;	/* the mapping's last 256 KiB in no slot */
	CHECK_EQ(memmap_check_maps(&m, f, RAM_RULE_HWLAB, err, sizeof(err)), -1);
	m.count = 1;
	m.slots[0] = (struct memmap_slot){ 0, 0, 0x1000, 0x4ed000, "anon" };
	CHECK_EQ(memmap_check_maps(&m, f, RAM_RULE_HWLAB_NAMED, err, sizeof(err)), -1);
	CHECK(strstr(err, "not inside guest RAM") && strstr(err, "[anon:hwlab-guest-ram]"),
	      "%s", err);
	fclose(f);
}

UNIT_TEST(lib, "shared library (numbers, memslot table)")
{
	test_parse_u64();
	test_parse_field_u64();
	test_memmap_round_trip();
	test_memmap_strict();
	test_memmap_check_maps();
	test_memmap_check_smaps();
	test_memmap_check_hwlab();
}
