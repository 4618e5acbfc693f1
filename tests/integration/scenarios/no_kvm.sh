# qemu-cpu: max,-svm
# An outer VM whose CPU has no SVM: kvm_amd cannot load, there is no
# /dev/kvm, and the VMM says why instead of crashing.
. /hwlab/scenarios/_lib.sh
check no-svm "no svm flag in /proc/cpuinfo" sh -c "! grep -qw svm /proc/cpuinfo"
check no-dev-kvm "no /dev/kvm" test ! -e /dev/kvm
run_vmm nokvm.log $GUEST
check vmm-no-kvm "VMM: exit 1, no hardware virtualization" \
	sh -c "[ $vmm_rc -eq 1 ] && grep -q 'neither svm nor vmx' nokvm.log.err"
hwlab-vmm --check >check.log 2>&1
check vmm-check-no-kvm "hwlab-vmm --check: exit 1 with the same message" \
	sh -c "[ $? -eq 1 ] && grep -q '/dev/kvm does not exist' check.log"
finish
