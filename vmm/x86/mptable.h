/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An Intel MultiProcessor Specification 1.4 table: how a Linux guest
 * without ACPI learns its CPUs (their local APIC ids), the I/O APIC and how
 * the ISA interrupts reach it. Pure: written into a buffer.
 */
#ifndef HWLAB_MPTABLE_H
#define HWLAB_MPTABLE_H

#include <stddef.h>
#include <stdint.h>

#define MPTABLE_LAPIC_GPA	0xfee00000U
#define MPTABLE_IOAPIC_GPA	0xfec00000U
#define MPTABLE_ISA_IRQS	16

struct mptable_cpu {
	uint32_t signature;	/* CPUID.1 EAX: family, model, stepping */
	uint32_t features;	/* CPUID.1 EDX */
};

/* Bytes mptable_write() needs for nr_cpus CPUs. */
size_t mptable_size(unsigned int nr_cpus);

/*
 * Write the floating pointer and the configuration table for nr_cpus CPUs
 * (APIC ids 0..nr_cpus-1, CPU 0 the bootstrap one) into dst, which lies at
 * guest-physical address gpa. The I/O APIC gets id nr_cpus; ISA IRQ n goes
 * to its pin n, as KVM's default GSI routing wires them. Returns the bytes
 * written, or 0 if room is too small.
 */
size_t mptable_write(void *dst, size_t room, uint32_t gpa, unsigned int nr_cpus,
		     const struct mptable_cpu *cpu);

#endif
