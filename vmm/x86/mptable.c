// SPDX-License-Identifier: GPL-2.0
#include "x86/mptable.h"

#include <string.h>

struct mpf_intel {			/* the floating pointer structure */
	char signature[4];		/* "_MP_" */
	uint32_t physptr;		/* the configuration table */
	uint8_t length;			/* in 16-byte units: 1 */
	uint8_t specification;		/* 4: version 1.4 */
	uint8_t checksum;
	uint8_t feature1;		/* 0: a configuration table follows */
	uint8_t feature2;		/* bit 7 IMCR: 0, virtual wire mode */
	uint8_t feature3, feature4, feature5;
} __attribute__((packed));

struct mpc_table {
	char signature[4];		/* "PCMP" */
	uint16_t length;		/* header and entries */
	uint8_t spec;
	uint8_t checksum;
	char oem[8];
	char productid[12];
	uint32_t oemptr;
	uint16_t oemsize;
	uint16_t oemcount;		/* entries */
	uint32_t lapic;
	uint16_t exlength;
	uint8_t exchecksum;
	uint8_t reserved;
} __attribute__((packed));

enum { MP_PROCESSOR, MP_BUS, MP_IOAPIC, MP_INTSRC, MP_LINTSRC };
enum { MP_INT, MP_NMI = 1, MP_EXTINT = 3 };
#define CPU_ENABLED		1
#define CPU_BOOTPROCESSOR	2
#define LAPIC_VERSION		0x14
#define IOAPIC_VERSION		0x11
#define MP_ALL_LAPICS		0xff

struct mpc_cpu {
	uint8_t type, apicid, apicver, cpuflag;
	uint32_t cpufeature, featureflag;
	uint32_t reserved[2];
} __attribute__((packed));

struct mpc_bus {
	uint8_t type, busid;
	char bustype[6];
} __attribute__((packed));

struct mpc_ioapic {
	uint8_t type, apicid, apicver, flags;
	uint32_t apicaddr;
} __attribute__((packed));

struct mpc_intsrc {			/* also a local interrupt (MP_LINTSRC) */
	uint8_t type, irqtype;
	uint16_t irqflag;		/* 0: polarity and trigger as the bus says */
	uint8_t srcbus, srcbusirq, dstapic, dstirq;
} __attribute__((packed));

#define ISA_BUS_ID		0

static uint8_t checksum(const void *p, size_t len)
{
	const uint8_t *b = p;
	uint8_t sum = 0;

	while (len--)
		sum += *b++;
	return (uint8_t)-sum;
}

/* ISA IRQs other than 2 (the PICs' cascade), and the two LINT pins */
#define NR_INTSRC		(MPTABLE_ISA_IRQS - 1)
#define NR_LINTSRC		2

size_t mptable_size(unsigned int nr_cpus)
{
	return sizeof(struct mpf_intel) + sizeof(struct mpc_table) +
	       nr_cpus * sizeof(struct mpc_cpu) + sizeof(struct mpc_bus) +
	       sizeof(struct mpc_ioapic) + (NR_INTSRC + NR_LINTSRC) * sizeof(struct mpc_intsrc);
}

size_t mptable_write(void *dst, size_t room, uint32_t gpa, unsigned int nr_cpus,
		     const struct mptable_cpu *cpu)
{
	size_t need = mptable_size(nr_cpus);
	struct mpf_intel *mpf = dst;
	struct mpc_table *mpc = (struct mpc_table *)(mpf + 1);
	uint8_t *p = (uint8_t *)(mpc + 1);
	uint8_t ioapic_id = nr_cpus;
	unsigned int i, entries = 0;

	if (room < need || nr_cpus < 1 || nr_cpus >= MP_ALL_LAPICS)
		return 0;
	memset(dst, 0, need);
	for (i = 0; i < nr_cpus; i++, entries++) {
		struct mpc_cpu *c = (struct mpc_cpu *)p;

		c->type = MP_PROCESSOR;
		c->apicid = i;
		c->apicver = LAPIC_VERSION;
		c->cpuflag = CPU_ENABLED | (i == 0 ? CPU_BOOTPROCESSOR : 0);
		c->cpufeature = cpu->signature;
		c->featureflag = cpu->features;
		p += sizeof(*c);
	}
	{
		struct mpc_bus *b = (struct mpc_bus *)p;

		b->type = MP_BUS;
		b->busid = ISA_BUS_ID;
		memcpy(b->bustype, "ISA   ", 6);
		p += sizeof(*b);
		entries++;
	}
	{
		struct mpc_ioapic *io = (struct mpc_ioapic *)p;

		io->type = MP_IOAPIC;
		io->apicid = ioapic_id;
		io->apicver = IOAPIC_VERSION;
		io->flags = 1;
		io->apicaddr = MPTABLE_IOAPIC_GPA;
		p += sizeof(*io);
		entries++;
	}
	for (i = 0; i < MPTABLE_ISA_IRQS; i++) {
		struct mpc_intsrc *s = (struct mpc_intsrc *)p;

		if (i == 2)
			continue;
		*s = (struct mpc_intsrc) { .type = MP_INTSRC, .irqtype = MP_INT,
			.srcbus = ISA_BUS_ID, .srcbusirq = i, .dstapic = ioapic_id, .dstirq = i };
		p += sizeof(*s);
		entries++;
	}
	for (i = 0; i < NR_LINTSRC; i++) {
		struct mpc_intsrc *s = (struct mpc_intsrc *)p;

		/* LINT0: the PIC's ExtINT (virtual wire); LINT1: NMI */
		*s = (struct mpc_intsrc) { .type = MP_LINTSRC, .irqtype = i ? MP_NMI : MP_EXTINT,
			.srcbus = ISA_BUS_ID, .dstapic = MP_ALL_LAPICS, .dstirq = i };
		p += sizeof(*s);
		entries++;
	}

	memcpy(mpc->signature, "PCMP", 4);
	mpc->length = p - (uint8_t *)mpc;
	mpc->spec = 4;
	memcpy(mpc->oem, "HWPOISON", 8);
	memcpy(mpc->productid, "HWLAB-VMM   ", 12);
	mpc->oemcount = entries;
	mpc->lapic = MPTABLE_LAPIC_GPA;
	mpc->checksum = checksum(mpc, mpc->length);

	memcpy(mpf->signature, "_MP_", 4);
	mpf->physptr = gpa + sizeof(*mpf);
	mpf->length = 1;
	mpf->specification = 4;
	mpf->checksum = checksum(mpf, sizeof(*mpf));
	return need;
}
