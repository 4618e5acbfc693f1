// SPDX-License-Identifier: GPL-2.0
/* lib/: number parsing and the memslot table format shared by the VMM and the tools. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
}

static void test_memmap_round_trip(void)
{
	struct memmap out = { .pid = 4242, .count = 2 }, in;
	char buf[512], err[128];
	FILE *f;

	out.slots[0] = (struct memmap_slot){ 0, 0, 0x800000, 0x7f0000000000ULL, "anon" };
	out.slots[1] = (struct memmap_slot){ 1, 0x800000, 0x800000, 0x7f1000000000ULL, "hugetlb" };
	f = fmemopen(buf, sizeof(buf), "w");
	CHECK_EQ(memmap_write(f, &out), 0);
	fclose(f);
	/* the exact text: scenarios read it with sed */
	CHECK(strstr(buf, "# pid 4242\n") == buf, "header first: %s", buf);
	CHECK(strstr(buf, "\n1 0x800000 0x800000 0x7f1000000000 hugetlb\n") != NULL, "%s", buf);

	f = fmemopen(buf, strlen(buf), "r");
	CHECK_EQ(memmap_read(f, &in, err, sizeof(err)), 0);
	fclose(f);
	CHECK_EQ(in.pid, 4242);
	CHECK_EQ(in.count, 2);
	CHECK_EQ(in.slots[1].hva, 0x7f1000000000ULL);
	CHECK(!strcmp(in.slots[1].backing, "hugetlb"), "backing %s", in.slots[1].backing);
	CHECK(memmap_find_gpa(&in, 0x9ff000) == &in.slots[1], "GPA in slot 1");
	CHECK(memmap_find_gpa(&in, 0x1000000) == NULL, "GPA past RAM");

	f = fmemopen((char *)"# pid 1\n0 0 zero 0x1000 anon\n", 28, "r");
	CHECK_EQ(memmap_read(f, &in, err, sizeof(err)), -1);
	CHECK(strstr(err, "line 2") != NULL, "names the bad line: %s", err);
	fclose(f);
	f = fmemopen((char *)"# pid 1\n", 8, "r");
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
		{ "# pid 4294967297\n0 0 0x1000 0x7f0000000000 anon\n", "line 1" },	/* wrapped to 1 */
		{ "# pid 12abc\n0 0 0x1000 0x7f0000000000 anon\n", "line 1" },
		{ "# pid -1\n0 0 0x1000 0x7f0000000000 anon\n", "line 1" },
		{ "# pid 0\n0 0 0x1000 0x7f0000000000 anon\n", "line 1" },
		{ "# pid 7\n# pid 8\n0 0 0x1000 0x7f0000000000 anon\n", "line 2" },
		{ "# pid 7\n0 0 0x1000 0x7f0000000000 anon garbage\n", "line 2" },
		{ "# pid 7\n0 0 0x1000 0x7f0000000000junk anon\n", "line 2" },
		{ "# pid 7\n4294967296 0 0x1000 0x7f0000000000 anon\n", "line 2" },
		{ "# pid 7\n0 0 0x10000000000000000 0x7f0000000000 anon\n", "line 2" },
		{ "# pid 7\n0 -1 0x1000 0x7f0000000000 anon\n", "line 2" },
		{ "# pid 7\n0 0 0 0x7f0000000000 anon\n", "line 2" },		/* empty slot */
		{ "# pid 7\n0 0xfffffffffffff000 0x2000 0x7f0000000000 anon\n", "line 2" },
		{ "# pid 7\n0 0 0x2000 0xfffffffffffff000 anon\n", "line 2" },
		{ "# pid 7\n0 0 0x1000 0x7f0000000000 floppy\n", "line 2" },
		{ "# pid 7\n0 0 0x1000 0x7f0000000000\n", "line 2" },
		{ "# pid 7\n0 0 0x2000 0x7f0000000000 anon\n1 0x1000 0x1000 0x7f1000000000 anon\n",
		  "line 3" },						/* overlaps slot 0 */
		{ "0 0 0x1000 0x7f0000000000 anon\n", "no '# pid N' header" },
	};
	struct memmap m;
	char err[200];
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		CHECK_EQ(read_text(bad[i].text, &m, err, sizeof(err)), -1);
		CHECK(strstr(err, bad[i].want) != NULL, "row %u: '%s' in '%s'", i, bad[i].want, err);
	}
	CHECK_EQ(read_text("# pid 4194304\n# slot gpa size hva backing\n\n"
			   "0 0 0x1000 0x7f0000000000 thp", &m, err, sizeof(err)), 0);
	CHECK_EQ(m.pid, 4194304);
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
	CHECK_EQ(memmap_check_maps(&m, f, err, sizeof(err)), 0);
	m.slots[0].hva = 0x400000;				/* the VMM's own text */
	m.slots[0].size = 0x1000;
	CHECK_EQ(memmap_check_maps(&m, f, err, sizeof(err)), -1);
	CHECK(strstr(err, "not inside private anonymous writable mappings of pid 9") != NULL,
	      "%s", err);
	m.slots[0].hva = 0x7f4000000000ULL;			/* the VMM's .data */
	CHECK_EQ(memmap_check_maps(&m, f, err, sizeof(err)), -1);
	m.slots[0].hva = 0x7f5000000000ULL;			/* a vCPU's kvm_run */
	CHECK_EQ(memmap_check_maps(&m, f, err, sizeof(err)), -1);
	m.slots[0].hva = 0x7f6000000000ULL;			/* shared anonymous */
	CHECK_EQ(memmap_check_maps(&m, f, err, sizeof(err)), -1);
	m.slots[0].hva = 0x7f7000000000ULL;			/* private hugetlb: guest RAM */
	CHECK_EQ(memmap_check_maps(&m, f, err, sizeof(err)), 0);
	m.slots[0] = (struct memmap_slot){ 0, 0, 0x800000, 0x7f1000000000ULL, "anon" };
	CHECK_EQ(memmap_check_maps(&m, f, err, sizeof(err)), -1);	/* a hole */
	m.slots[0].hva = 0x7f2000000000ULL;				/* read-only */
	CHECK_EQ(memmap_check_maps(&m, f, err, sizeof(err)), -1);
	m.slots[0].hva = 0x7f3000000000ULL;				/* nothing there */
	CHECK_EQ(memmap_check_maps(&m, f, err, sizeof(err)), -1);
	m.slots[0] = (struct memmap_slot){ 0, 0, 0x1000000, 0x7f0000000000ULL, "anon" };
	m.slots[1] = (struct memmap_slot){ 1, 0x1000000, 0x1000, 0x7f2000000000ULL, "anon" };
	m.count = 2;						/* the second slot is bad */
	CHECK_EQ(memmap_check_maps(&m, f, err, sizeof(err)), -1);
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
	CHECK_EQ(memmap_check_maps(&m, f, err, sizeof(err)), 0);
	m.slots[0].hva = 0x7f1000000000ULL;		/* a private file, "hta" is not "ht" */
	m.slots[0].size = 0x1000;
	CHECK_EQ(memmap_check_maps(&m, f, err, sizeof(err)), -1);
	m.slots[0].hva = 0x7f2000000000ULL;		/* shared hugetlbfs */
	CHECK_EQ(memmap_check_maps(&m, f, err, sizeof(err)), -1);
	m.slots[0].hva = 0x7f3000000000ULL;		/* anonymous, the last mapping */
	CHECK_EQ(memmap_check_maps(&m, f, err, sizeof(err)), 0);
	fclose(f);
	f = fmemopen((char *)garbage, sizeof(garbage) - 1, "r");
	CHECK_EQ(memmap_check_maps(&m, f, err, sizeof(err)), -1);
	fclose(f);
}

/* memmap_private_dir(): made 0700 when missing; a symlink or an open mode refused. */
static void test_memmap_private_dir(void)
{
	char base[] = "/tmp/hwlab-unit.XXXXXX", dir[64], link[64], err[200];
	struct stat st;

	if (!mkdtemp(base)) {
		CHECK(0, "mkdtemp: cannot test memmap_private_dir");
		return;
	}
	snprintf(dir, sizeof(dir), "%s/new", base);
	snprintf(link, sizeof(link), "%s/link", base);
	CHECK_EQ(memmap_private_dir(dir, err, sizeof(err)), 0);
	CHECK(!stat(dir, &st) && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700,
	      "created mode 0700");
	CHECK_EQ(memmap_private_dir(dir, err, sizeof(err)), 0);	/* again: ours, fine */
	CHECK_EQ(symlink(dir, link), 0);
	CHECK_EQ(memmap_private_dir(link, err, sizeof(err)), -1);
	CHECK(strstr(err, "symbolic link") != NULL, "%s", err);
	CHECK_EQ(chmod(dir, 0755), 0);
	CHECK_EQ(memmap_private_dir(dir, err, sizeof(err)), -1);
	CHECK(strstr(err, "mode 0755, not 0700") != NULL, "%s", err);
	if (geteuid() == 0) {
		CHECK_EQ(chmod(dir, 0700), 0);
		CHECK_EQ(chown(dir, 65534, 65534), 0);
		CHECK_EQ(memmap_private_dir(dir, err, sizeof(err)), -1);
		CHECK(strstr(err, "owned by uid 65534") != NULL, "%s", err);
	}
	unlink(link);
	rmdir(dir);
	rmdir(base);
}

static void test_memmap_default_path(void)
{
	char path[64];

	memmap_default_path(path, sizeof(path), 1234, 0);
	CHECK(!strcmp(path, "/run/hwlab-vmm/1234.memmap"), "%s", path);
	memmap_default_path(path, sizeof(path), 1234, 1000);
	CHECK(!strcmp(path, "/tmp/hwlab-vmm-1000/1234.memmap"), "%s", path);
}

void test_lib(void)
{
	test_parse_u64();
	test_memmap_round_trip();
	test_memmap_strict();
	test_memmap_check_maps();
	test_memmap_check_smaps();
	test_memmap_private_dir();
	test_memmap_default_path();
}
