// SPDX-License-Identifier: GPL-2.0
/*
 * kvm_hold: the outer VM's /init starts it before any scenario when the
 * kernel command line says hwlab.kvm_hold=1 (outer-qemu/boot.sh does, with
 * maxcpus=1, for Debian's stock sid and trixie kernels). It creates one empty KVM VM and
 * keeps it until the VM is powered off; /init then brings the other CPUs up.
 *
 * Why: the first VM the outer kernel creates switches the preempt-notifier
 * static key on (kvm_create_vm() -> preempt_notifier_inc()), the last one
 * destroyed switches it off, each time patching __schedule() with an int3
 * while the CPUs run it. Under the outer VM's multi-threaded TCG (QEMU 7.2
 * here) sid's stock 7.2.13 then panicked in 3 of about 25 boots (trixie's
 * 6.12.118 once), "Oops: int3" in __schedule on both vCPUs, the jump already in memory: a
 * vCPU ran a translation made mid-patch. Once it was the only switch of the
 * boot, with nothing else running: fewer switches are not enough. Made on
 * one CPU, the switch has no other vCPU to race; kept, it never comes back.
 * (Single-threaded TCG avoided it too, but made sid's long cases time out.)
 *
 * Without /dev/kvm it exits 0 and says so: nothing to hold. Usage: kvm_hold
 * (prints one line, then waits).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

int main(void)
{
	int kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	int vm;

	if (kvm < 0) {
		printf("kvm_hold: no VM held: /dev/kvm: %s\n", strerror(errno));
		return 0;
	}
	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0) {
		printf("kvm_hold: no VM held: KVM_CREATE_VM: %s\n", strerror(errno));
		return 1;
	}
	printf("kvm_hold: holding an empty VM (pid %d): the preempt-notifier key stays on\n",
	       (int)getpid());
	fflush(stdout);
	for (;;)
		pause();
}
