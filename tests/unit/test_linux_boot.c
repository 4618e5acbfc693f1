// SPDX-License-Identifier: GPL-2.0
/* The Linux guest's boot pieces that need no VM: bzImage, e820, MP table, CPUID, UART. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boot/bzimage.h"
#include "x86/cpuid.h"
#include "boot/linux_boot.h"
#include "x86/mptable.h"
#include "pc/uart_8250.h"
#include "unit.h"

/* A file that looks like a bzImage of protocol 2.15 with 2 setup sectors. */
static uint8_t *fake_bzimage(size_t size)
{
	uint8_t *d = calloc(1, size);
	struct setup_header h = {
		.setup_sects = 2, .boot_flag = 0xaa55, .header = 0x53726448, .version = 0x020f,
		.loadflags = LOADED_HIGH, .xloadflags = XLF_KERNEL_64, .cmdline_size = 2047,
		.initrd_addr_max = 0x7fffffff, .init_size = 0x800000,
	};

	memcpy(d + 0x1f1, &h, sizeof(h));
	d[0x201] = 0x6a;	/* the jump: header ends at 0x26c */
	return d;
}

static void test_bzimage(void)
{
	char err[256];
	struct bzimage bz;
	uint8_t *d = fake_bzimage(0x10000);

	CHECK_EQ(bzimage_parse(d, 0x10000, &bz, err, sizeof(err)), 0);
	CHECK_EQ(bz.kernel_offset, 3 * 512);
	CHECK_EQ(bz.kernel_size, 0x10000 - 3 * 512);
	CHECK_EQ(bz.hdr.init_size, 0x800000);
	CHECK_EQ(bz.hdr_len, 0x26c - 0x1f1);

	CHECK_EQ(bzimage_parse(d, 0x300, &bz, err, sizeof(err)), -1);	/* too short */
	d[0x202] = 'X';
	CHECK_EQ(bzimage_parse(d, 0x10000, &bz, err, sizeof(err)), -1);
	CHECK(strstr(err, "not a bzImage"), "got '%s'", err);
	d[0x202] = 'H';
	((struct setup_header *)(d + 0x1f1))->xloadflags = 0;
	CHECK_EQ(bzimage_parse(d, 0x10000, &bz, err, sizeof(err)), -1);
	CHECK(strstr(err, "64-bit entry"), "got '%s'", err);
	((struct setup_header *)(d + 0x1f1))->xloadflags = XLF_KERNEL_64;
	((struct setup_header *)(d + 0x1f1))->version = 0x0206;
	CHECK_EQ(bzimage_parse(d, 0x10000, &bz, err, sizeof(err)), -1);
	CHECK(strstr(err, "boot protocol 2.06"), "got '%s'", err);
	((struct setup_header *)(d + 0x1f1))->version = 0x020f;
	/* setup sectors past the end of the file */
	((struct setup_header *)(d + 0x1f1))->setup_sects = 200;
	CHECK_EQ(bzimage_parse(d, 0x10000, &bz, err, sizeof(err)), -1);
	((struct setup_header *)(d + 0x1f1))->setup_sects = 2;
	/* a header that claims to end early: too old to have init_size */
	d[0x201] = 0x10;
	CHECK_EQ(bzimage_parse(d, 0x10000, &bz, err, sizeof(err)), -1);
	/* a header longer than this VMM knows is cut, not overrun */
	d[0x201] = 0xff;
	CHECK_EQ(bzimage_parse(d, 0x10000, &bz, err, sizeof(err)), 0);
	CHECK_EQ(bz.hdr_len, sizeof(struct setup_header));
	free(d);
}

static void test_e820(void)
{
	struct e820_range e[8];
	unsigned int n = linux_boot_e820(128ULL << 20, e, 8);

	CHECK_EQ(n, 3);
	CHECK(e[0].addr == 0 && e[0].size == LINUX_LOW_RAM_END && e[0].type == 1, "low RAM");
	/* the MP table lies in reserved memory, never in RAM the kernel reuses */
	CHECK(e[1].type == 2 && e[1].addr <= LINUX_MPTABLE_GPA &&
	      e[1].addr + e[1].size >= LINUX_MPTABLE_GPA + 1024, "MP table reserved");
	CHECK(e[2].addr == 0x100000 && e[2].addr + e[2].size == 128ULL << 20 && e[2].type == 1,
	      "RAM from 1 MiB to the end");
	CHECK_EQ(linux_boot_e820(1 << 20, e, 8), 0);
	CHECK_EQ(linux_boot_e820(128ULL << 20, e, 2), 0);
}

static uint8_t sum(const uint8_t *p, size_t n)
{
	uint8_t s = 0;

	while (n--)
		s += *p++;
	return s;
}

static void test_mptable(void)
{
	uint8_t buf[1024];
	struct mptable_cpu cpu = { .signature = 0xf6b1, .features = 0x178bfbff };
	size_t n = mptable_write(buf, sizeof(buf), 0x9fc00, 2, &cpu);
	uint16_t len;

	CHECK_EQ(n, mptable_size(2));
	CHECK(!memcmp(buf, "_MP_", 4), "floating pointer signature");
	CHECK_EQ(sum(buf, 16), 0);
	CHECK_EQ(*(uint32_t *)(buf + 4), 0x9fc00 + 16);	/* the table right after it */
	CHECK(!memcmp(buf + 16, "PCMP", 4), "table signature");
	memcpy(&len, buf + 20, 2);
	CHECK_EQ(len, n - 16);
	CHECK_EQ(sum(buf + 16, len), 0);
	/* two processors, the first the bootstrap one with APIC id 0 */
	CHECK(buf[60] == 0 && buf[61] == 0 && buf[63] == 3, "CPU 0: enabled, BSP");
	CHECK(buf[80] == 0 && buf[81] == 1 && buf[83] == 1, "CPU 1: enabled, not BSP");
	/* the I/O APIC after the bus entry, with the id after the CPUs' */
	CHECK(buf[108] == 2 && buf[109] == 2, "I/O APIC id 2");
	CHECK_EQ(*(uint16_t *)(buf + 16 + 34), 2 + 1 + 1 + 15 + 2);	/* entries */
	CHECK_EQ(mptable_write(buf, 100, 0x9fc00, 2, &cpu), 0);		/* no room */
	CHECK_EQ(mptable_write(buf, sizeof(buf), 0x9fc00, 0, &cpu), 0);
}

static void test_cpuid(void)
{
	struct kvm_cpuid2 *c = calloc(1, sizeof(*c) + 4 * sizeof(c->entries[0]));
	struct kvm_cpuid2 *v;

	c->nent = 4;
	c->entries[0] = (struct kvm_cpuid_entry2) { .function = 0, .eax = 0xd };
	memcpy(&c->entries[0].ebx, "Auth", 4);
	memcpy(&c->entries[0].edx, "enti", 4);
	memcpy(&c->entries[0].ecx, "cAMD", 4);
	c->entries[1] = (struct kvm_cpuid_entry2) { .function = 1, .ebx = 0x00010800 };
	c->entries[2] = (struct kvm_cpuid_entry2) { .function = 0x80000000, .eax = 0x80000001 };
	c->entries[3] = (struct kvm_cpuid_entry2) { .function = 0x80000007, .edx = 0x100 };
	CHECK_EQ(cpuid_vendor(c), CPU_VENDOR_AMD);
	CHECK_EQ(cpuid_set_mca_recovery(c), 0);
	CHECK_EQ(c->entries[3].ebx, CPUID_8000_0007_EBX_SUCCOR | CPUID_8000_0007_EBX_OVERFLOW_RECOV);
	CHECK_EQ(c->entries[3].edx, 0x100);	/* the rest of the leaf kept */
	CHECK_EQ(c->entries[2].eax, 0x80000007);	/* the leaf is reachable */
	v = cpuid_for_vcpu(c, 3);
	CHECK_EQ(v->entries[1].ebx, 0x03010800);	/* APIC id in bits 31:24 */
	CHECK_EQ(c->entries[1].ebx, 0x00010800);	/* the VM's table untouched */
	free(v);
	memcpy(&c->entries[0].ebx, "Genu", 4);
	memcpy(&c->entries[0].edx, "ineI", 4);
	memcpy(&c->entries[0].ecx, "ntel", 4);
	CHECK_EQ(cpuid_vendor(c), CPU_VENDOR_INTEL);
	/* MCA broadcast where QEMU's cpu_x86_support_mca_broadcast() says so */
	c->entries[1].eax = 0x00000f48;		/* K8 here: family 0xf */
	CHECK_EQ(cpuid_mca_broadcast(c), 1);
	c->entries[1].eax = 0x000006d0;		/* family 6 model 13: before Core */
	CHECK_EQ(cpuid_mca_broadcast(c), 0);
	c->entries[1].eax = 0x000006e0;		/* family 6 model 14 */
	CHECK_EQ(cpuid_mca_broadcast(c), 1);
	c->entries[1].eax = 0x000506f1;		/* family 6 model 0x5f: the extended model counts */
	CHECK_EQ(cpuid_mca_broadcast(c), 1);
	c->entries[1].eax = 0x00000f00 - 0x100;	/* family 0xe */
	CHECK_EQ(cpuid_mca_broadcast(c), 1);
	c->entries[1].eax = 0x00000543;		/* family 5 */
	CHECK_EQ(cpuid_mca_broadcast(c), 0);
	c->nent = 1;	/* no leaf 1: no broadcast */
	CHECK_EQ(cpuid_mca_broadcast(c), 0);
	c->nent = 2;	/* no 0x80000007 leaf to set */
	CHECK_EQ(cpuid_set_mca_recovery(c), -1);
	free(c);
}

static int irq_level = -1, irq_changes;

static void record_irq(void *ctx, int level)
{
	(void)ctx;
	irq_level = level;
	irq_changes++;
}

static void test_uart(void)
{
	struct uart_8250 u;
	struct outq q;
	int p[2];
	char out[64] = "";
	uint8_t b;

	CHECK_EQ(pipe(p), 0);
	/* not started: each line is written at once, by the caller */
	q = (struct outq)OUTQ_INIT(p[1]);
	uart_init(&u, &q, record_irq, NULL);
	/* Linux's 8250 probe: IER holds 4 bits, loopback maps MCR to MSR */
	b = 0x0f;
	uart_io(&u, 1, 1, &b);
	uart_io(&u, 1, 0, &b);
	CHECK_EQ(b, 0x0f);
	b = 0x1a;	/* LOOP | RTS | OUT2 */
	uart_io(&u, 4, 1, &b);
	uart_io(&u, 6, 0, &b);
	CHECK_EQ(b & 0xf0, 0x90);
	b = 0;
	uart_io(&u, 4, 1, &b);
	/* FIFO enabled: a 16550A */
	b = 0x01;
	uart_io(&u, 2, 1, &b);
	b = 0;
	uart_io(&u, 1, 1, &b);
	uart_io(&u, 2, 0, &b);
	CHECK_EQ(b, 0xc1);	/* FIFOs on, no interrupt */
	/* enabling THRI with an empty transmitter interrupts at once */
	b = 0x02;
	uart_io(&u, 1, 1, &b);
	CHECK_EQ(irq_level, 1);
	uart_io(&u, 2, 0, &b);
	CHECK_EQ(b, 0xc2);	/* THRE pending; reading IIR acknowledges it */
	CHECK_EQ(irq_level, 0);
	/* a line goes out whole; each byte owes another THRE interrupt */
	for (const char *s = "hi\n"; *s; s++) {
		b = *s;
		uart_io(&u, 0, 1, &b);
		CHECK_EQ(irq_level, 1);
		uart_io(&u, 2, 0, &b);
	}
	CHECK_EQ(read(p[0], out, sizeof(out) - 1), 3);
	CHECK(!strcmp(out, "hi\n"), "console got '%s'", out);
	/* received bytes: LSR.DR and an RDI interrupt when enabled */
	b = 0x01;
	uart_io(&u, 1, 1, &b);
	CHECK_EQ(uart_receive(&u, (const uint8_t *)"x", 1), 1);
	CHECK_EQ(irq_level, 1);
	uart_io(&u, 5, 0, &b);
	CHECK_EQ(b & 0x61, 0x61);	/* DR, THRE, TEMT */
	uart_io(&u, 0, 0, &b);
	CHECK_EQ(b, 'x');
	CHECK_EQ(irq_level, 0);
	/* DLAB: offsets 0 and 1 are the divisor, not data */
	b = 0x83;
	uart_io(&u, 3, 1, &b);
	b = 1;
	uart_io(&u, 0, 1, &b);
	b = 0x83 & 0x7f;
	uart_io(&u, 3, 1, &b);
	CHECK_EQ(u.bytes_out, 3);
	close(p[0]);
	close(p[1]);
}

/* The --append limit and where the initrd goes, with errors that name the real limit. */
static void test_limits(void)
{
	char err[256] = "";
	uint64_t gpa = 0;

	CHECK_EQ(linux_boot_cmdline_max(2047), 2047);
	CHECK_EQ(linux_boot_cmdline_max(100000), LINUX_CMDLINE_MAX - 1);
	/* none given: our own limit, not "at most 0" */
	CHECK_EQ(linux_boot_cmdline_max(0), LINUX_CMDLINE_MAX - 1);

	/* at the top of RAM, page-aligned */
	CHECK_EQ(linux_boot_place_initrd(128ULL << 20, 0x7fffffff, 0x2000000, 5000, &gpa, err,
					 sizeof(err)), 0);
	CHECK_EQ(gpa, (128ULL << 20) - 8192);
	/* below initrd_addr_max when RAM goes higher */
	CHECK_EQ(linux_boot_place_initrd(3ULL << 30, 0x3fffffff, 0x2000000, 4096, &gpa, err,
					 sizeof(err)), 0);
	CHECK_EQ(gpa, (1ULL << 30) - 4096);
	/* RAM is short: more --mem, and the size in bytes (a 600-byte initrd was "0 KiB") */
	CHECK_EQ(linux_boot_place_initrd(32ULL << 20, 0x7fffffff, 0x1f00000, 2 << 20, &gpa, err,
					 sizeof(err)), -1);
	CHECK(strstr(err, "2097152 bytes") && strstr(err, "more --mem") &&
	      !strstr(err, "initrd_addr_max"), "%s", err);
	CHECK_EQ(linux_boot_place_initrd(32ULL << 20, 0, 0x2000000, 600, &gpa, err,
					 sizeof(err)), -1);
	CHECK(strstr(err, "600 bytes") && !strstr(err, "0 KiB"), "%s", err);
	/* initrd_addr_max is short: more --mem would not help, and the error says so */
	CHECK_EQ(linux_boot_place_initrd(3ULL << 30, 0x2ffffff, 0x2000000, 20 << 20, &gpa, err,
					 sizeof(err)), -1);
	CHECK(strstr(err, "initrd_addr_max 0x2ffffff") && !strstr(err, "more --mem"), "%s", err);
}

/* Bytes the UART sent to a console pipe, one THR write each. */
static void uart_send(struct uart_8250 *u, const char *s, unsigned int n)
{
	uint8_t b;

	for (; n--; s++) {
		b = *s;
		uart_io(u, 0, 1, &b);
	}
}

/*
 * --console-stamp stamps a line's start only: a line longer than the
 * UART's line buffer goes out in parts, and the second part once got a
 * stamp of its own in the middle of the line.
 */
static void test_uart_stamp(void)
{
	struct uart_8250 u;
	struct outq q;
	char longline[3 * UART_LINE_MAX + 1], out[4096];
	int p[2], n, stamps = 0;
	char *at;

	CHECK_EQ(pipe(p), 0);
	q = (struct outq)OUTQ_INIT(p[1]);
	uart_init(&u, &q, NULL, NULL);
	u.stamp = 1;
	memset(longline, 'x', sizeof(longline) - 1);
	longline[sizeof(longline) - 1] = '\n';
	uart_send(&u, longline, sizeof(longline));
	uart_send(&u, "short\n", 6);
	n = read(p[0], out, sizeof(out) - 1);
	CHECK(n > 0, "no console output");
	out[n > 0 ? n : 0] = 0;
	for (at = out; (at = strstr(at, "[t_ns=")); at++)
		stamps++;
	CHECK(stamps == 2, "%d stamps for 2 lines (one of %zu bytes)", stamps, sizeof(longline));
	CHECK(!strncmp(out, "[t_ns=", 6), "the first line starts '%.10s'", out);
	at = strstr(out, "\n[t_ns=");
	CHECK(at && !strncmp(at + 1 + strcspn(at + 1, "]") + 2, "short\n", 6),
	      "the second line is not a stamped 'short'");
	close(p[0]);
	close(p[1]);
}

UNIT_TEST(linux_boot, "Linux guest boot: bzImage, e820, MP table, CPUID, UART")
{
	test_limits();
	test_bzimage();
	test_e820();
	test_mptable();
	test_cpuid();
	test_uart();
	test_uart_stamp();
}
