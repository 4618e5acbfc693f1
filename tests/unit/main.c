// SPDX-License-Identifier: GPL-2.0
/* Host unit tests: the VMM's pure logic, no VM and no /dev/kvm needed. */
#include "unit.h"

unsigned int unit_passed, unit_failed;

static void run(const char *name, void (*fn)(void))
{
	unsigned int before = unit_failed;

	fn();
	printf("%s %s\n", unit_failed == before ? "ok  " : "FAIL", name);
}

int main(void)
{
	run("memslot translation", test_memslot);
	run("a lost huge page salvaged: 4 KiB lost, not 2 MiB", test_hugetlb_salvage);
	run("MCE encoding", test_mce_encode);
	run("MCE encoding, AMD vCPUs", test_mce_encode_amd);
	run("AMD deferred-error banks", test_mce_deferred_bank);
	run("MCA broadcast encoding", test_mce_encode_broadcast);
	run("QMP replies and gpa2hva", test_qmp);
	run("libvirt memory-failure events as report lines", test_memory_failure_event);
	run("Linux guest boot: bzImage, e820, MP table, CPUID, UART", test_linux_boot);
	run("poisoned-page list", test_poison_list);
	run("guest ELF loader", test_elf_load);
	run("SIGBUS event to machine check", test_mce_event);
	run("shared library (numbers, memslot table)", test_lib);
	run("VMM options table", test_options);
	run("hwpoison-guest's options table", test_hwpoison_guest_options);
	run("option-table engine (lib)", test_opt_engine);
	run("SIGBUS event ring", test_ao_ring);
	run("SIGBUS event ring, several producers", test_ao_ring_threads);
	run("AO delivery to a running vCPU", test_mce_delivery);
	run("ucall decoder", test_ucall);
	run("guest log rate limit", test_ratelimit);
	run("which pages a tool may poison", test_page_classify);
	run("SIGBUS a process sent: counted, not in the AO ring", test_sigbus_foreign);
	run("vCPU reset to its power-on state (host /dev/kvm)", test_vcpu_reset);
	run("output queue: drops, notices, EPIPE", test_outq);
	run("CPUID: XSAVE as the vCPU can enable it (outer VM's KVM)", test_cpuid_xsave);
	run("port exits: the busiest ports", test_pc_io_busiest);
	run("no keyboard controller, found in a few port exits; its reset line", test_pc_io_i8042);
	run("the AGP aperture search ends at its first probe; still no PCI", test_pc_io_agp_search);
	printf("unit: %u passed, %u failed\n", unit_passed, unit_failed);
	return unit_failed != 0;
}
