# Foundation smoke test: the outer kernel has what the rest of the project needs.
. /hwlab/scenarios/_lib.sh
check debugfs-corrupt-pfn "/sys/kernel/debug/hwpoison/corrupt-pfn exists" \
	test -e /sys/kernel/debug/hwpoison/corrupt-pfn
check early-kill-sysctl "/proc/sys/vm/memory_failure_early_kill exists" \
	test -e /proc/sys/vm/memory_failure_early_kill
check cpuinfo-svm "svm flag in /proc/cpuinfo" grep -qw svm /proc/cpuinfo
check dev-kvm "/dev/kvm exists" test -c /dev/kvm
# The outer kernel's tick is the APIC timer in periodic mode (boot.sh's
# highres=off): host QEMU 7.2 re-arms it itself, so a timer interrupt its TCG
# loses costs one tick instead of freezing the outer VM for good
# (/proc/timer_list: the per-CPU tick device is the lapic in clockevent
# state 2, CLOCK_EVT_STATE_PERIODIC; hres_active 0)
check outer-tick-periodic "the outer kernel's tick is the lapic in periodic mode, no high-resolution (one-shot) tick host QEMU could lose" \
	sh -c "sed -n '/^Per CPU device: 0/,/^\$/p' /proc/timer_list | grep -q '^Clock Event Device: lapic' &&
	       sed -n '/^Per CPU device: 0/,/^\$/p' /proc/timer_list | grep -q '^ mode:  *2\$' &&
	       grep -q 'hres_active  *: 0' /proc/timer_list"
check kvm-create-vm "KVM_CREATE_VM on kvm_amd works (hwlab-vmm --check)" hwlab-vmm --check
hwlab-vmm --check
madvise_sigbus || hwlab_failures=$((hwlab_failures + $?))
finish
