# Foundation smoke test: the outer kernel has what the rest of the project needs.
. /hwlab/scenarios/_lib.sh
check debugfs-corrupt-pfn "/sys/kernel/debug/hwpoison/corrupt-pfn exists" \
	test -e /sys/kernel/debug/hwpoison/corrupt-pfn
check early-kill-sysctl "/proc/sys/vm/memory_failure_early_kill exists" \
	test -e /proc/sys/vm/memory_failure_early_kill
check cpuinfo-svm "svm flag in /proc/cpuinfo" grep -qw svm /proc/cpuinfo
check dev-kvm "/dev/kvm exists" test -c /dev/kvm
check kvm-create-vm "KVM_CREATE_VM on kvm_amd works (hwlab-vmm --check)" hwlab-vmm --check
hwlab-vmm --check
madvise_sigbus || hwlab_failures=$((hwlab_failures + $?))
finish
