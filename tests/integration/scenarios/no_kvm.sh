# An outer VM whose CPU has no SVM: kvm_amd cannot load, there is no
# /dev/kvm, and the VMM says why instead of crashing.
. /hwlab/scenarios/_lib.sh
check no-svm "no svm flag in /proc/cpuinfo" sh -c "! grep -qw svm /proc/cpuinfo"
check no-dev-kvm "no /dev/kvm" test ! -e /dev/kvm
expect vmm-no-kvm 1 'neither svm nor vmx' timed_vmm $GUEST
expect vmm-check-no-kvm 1 '/dev/kvm does not exist' hwlab-vmm --check
finish
