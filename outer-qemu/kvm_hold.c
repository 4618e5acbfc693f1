// SPDX-License-Identifier: GPL-2.0
/*
 * kvm_hold: the outer VM's /init starts it before any scenario. It creates
 * one empty KVM VM and keeps it until the VM is powered off.
 *
 * Why: the first VM the outer kernel creates turns on the static key of
 * preempt notifiers (kvm_create_vm() -> preempt_notifier_inc()), and the
 * last one destroyed turns it off again, each time patching __schedule()
 * with text_poke_bp() (an int3, the new bytes, the first byte) while every
 * CPU runs it. Each scenario starts and stops VMs, so that toggled dozens of
 * times a boot. Under the outer VM's multi-threaded TCG (QEMU 7.2 here) a
 * vCPU has executed that int3 after the patch completed: "Oops: int3" at
 * __schedule+0x38f and a panic, twice in about twenty boots of Debian sid's
 * stock 7.2.13 (upstream_kvm, the side-by-side). With this VM alive the key
 * is turned on once, at boot, and never again.
 *
 * Without /dev/kvm (the no_kvm scenario's CPU has no SVM) it exits 0 and
 * says so: nothing to hold. Usage: kvm_hold (prints one line, then waits).
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
