// SPDX-License-Identifier: GPL-2.0
/*
 * hwpoison-guest: poison the host page behind a guest-physical address of a
 * running hwlab-vmm, the way a memory error would strike it: GPA -> HVA from
 * the VMM's published memslot table, HVA -> PFN from /proc/PID/pagemap, and
 * the PFN into the kernel's debugfs injector (hwpoison/corrupt-pfn), which
 * runs memory_failure() on it.
 *
 *   hwpoison-guest [options] PID GPA
 *   hwpoison-guest --soak N --log VMM_REPORT [options] PID FIRST_GPA
 *
 * --corrupt-va writes "PID HVA" to hwpoison/corrupt-va instead (kernel patch
 * 0002), which cannot hit a page that changed hands.
 *
 * --qmp SOCKET: PID is a QEMU, the reference VMM, and its own monitor says
 * where the GPA is (gpa2hva over the QMP socket); the same page checks and
 * write follow, so both VMMs are poisoned exactly alike.
 *
 *   hwpoison-guest [--connect URI] --domain NAME [options] GPA
 *   hwpoison-guest [--connect URI] --watch [--domain NAME] [--start XML]
 *
 * --domain: a QEMU run by libvirt, as its users run it: the pid and the
 * GPA -> HVA come through libvirt (libvirt_domain.c), then the same checks
 * and write. --watch prints libvirt's memory-failure events as report
 * lines (memory_failure_event.h) and takes "poison GPA" and "save FILE"
 * (virDomainSave) requests on stdin:
 * with the embedded driver (qemu:///embed?root=DIR) only the process that
 * started a domain (--start) can reach it. Only in the libvirt build
 * (HWLAB_LIBVIRT); the static one for the outer VM's base image has none.
 *
 * It runs as root and poisons whatever PFN it writes, so it trusts nothing
 * it did not check: the table must be the VMM's own (not a symlink, mode
 * 0600, owned by the VMM's uid, a process whose exe is hwlab-vmm, its
 * "# pid P start T" header that very process: its pid and start time; the
 * file one that process holds open, which only its writer can: a stale
 * table of a killed VMM whose pid was reused, or a copy, is refused), every
 * slot inside the guest RAM hwlab-vmm marks (VmFlags dd, and the name
 * [anon:hwlab-guest-ram] where the kernel names anonymous mappings: not its
 * .bss, heap or a thread's stack), and the page must be the VMM's alone
 * (not the zero page, not KSM, exclusively mapped). It never faults a page
 * in itself.
 *
 * The write's order: the injector is opened first (a regular file, on
 * debugfs unless --debugfs names a stand-in; O_NONBLOCK|O_NOFOLLOW, never
 * created), then the last checks (same process by start time, the page's
 * PFN unchanged and still exclusive, the table still held), then the write,
 * with nothing that can block in between. What no check can close: between
 * the last pagemap read and the kernel's memory_failure() on that PFN the
 * page can still change hands (freed by a VMM that exits, migrated,
 * merged): corrupt-pfn names a frame, not a mapping. --corrupt-va has no
 * such window: the kernel resolves pid and address itself.
 *
 * Test hook: with HWPOISON_GUEST_TEST_STOP_BEFORE_RECHECK set in the
 * environment the tool stops itself (SIGSTOP) with the injector open,
 * before the last checks, so a test can change the target there and see
 * the write refused; it only pauses.
 *
 * --soak poisons N consecutive pages one at a time and waits for the guest's
 * acknowledgement of each (the VMM's guest_retired line) before the next,
 * then prints how long each took from the corrupt-pfn write.
 *
 * This file is main(): the command line's forms in order. The parts, one
 * concern a file, are named in tools/hwpoison_guest.h.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include "hwpoison_guest.h"
#include "log.h"
#include "memmap.h"
#include "parse_num.h"

int main(int argc, char **argv)
{
	struct hwpoison_guest g = { .target_exe = "hwlab-vmm" };
	const struct hwpoison_guest_options *o = &g.opt;
	const char *memmap_path;
	char memmap_default[64];
	static struct memmap m;
	uint64_t gpa, pid;
	uid_t vmm_uid;
	int rc;

	log_prog = "hwpoison-guest";
	rc = hwpoison_guest_parse(argc, argv, &g.opt);
	if (rc)
		return rc;
	if (o->help) {
		hwpoison_guest_usage(stdout);
		return 0;
	}
	if (hwpoison_guest_uses_libvirt(o)) {
#ifdef HWLAB_LIBVIRT
		return hwpoison_guest_libvirt(&g);
#else
		die("this hwpoison-guest was built without libvirt (the static build for the outer "
		    "VM's base image): use build/hwpoison-guest");
#endif
	}
	if (parse_u64(o->operands[0], HWLAB_PID_MAX, &pid) || !pid)
		die("'%s' is not a pid", o->operands[0]);
	if (parse_u64(o->operands[1], UINT64_MAX, &gpa))
		die("'%s' is not a guest-physical address", o->operands[1]);
	if (kill(pid, 0) && errno == ESRCH)
		die("pid %d: no such process", (int)pid);
	/* first: every check below is then known to be about this process */
	g.vmm_start_time = proc_start_time(pid);
	if (!g.vmm_start_time)
		die("pid %d: cannot read /proc/%d/stat", (int)pid, (int)pid);
	vmm_uid = target_owner_uid(pid);
	if (o->qmp_socket)
		g.target_exe = "qemu-system-x86_64";
	target_check_exe(&g, pid);
	if (o->qmp_socket) {
		target_read_qmp(&g, pid, gpa, &m);
		hwpoison_guest_poison(&g, pid, &m, gpa);
		return 0;
	}
	memmap_path = o->memmap_path;
	if (!memmap_path) {
		memmap_default_path(memmap_default, sizeof(memmap_default), pid, vmm_uid);
		memmap_path = memmap_default;
	}
	target_read_table(&g, memmap_path, pid, vmm_uid, &m);
	if (o->soak_events)
		return hwpoison_guest_soak(&g, pid, &m, gpa);
	hwpoison_guest_poison(&g, pid, &m, gpa);
	return 0;
}
