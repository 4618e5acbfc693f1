# Foundation smoke test: the outer kernel has what the rest of the project needs.
. /hwlab/scenarios/_lib.sh
check debugfs-corrupt-pfn "/sys/kernel/debug/hwpoison/corrupt-pfn exists" \
	test -e /sys/kernel/debug/hwpoison/corrupt-pfn
check early-kill-sysctl "/proc/sys/vm/memory_failure_early_kill exists" \
	test -e /proc/sys/vm/memory_failure_early_kill
check cpuinfo-svm "svm flag in /proc/cpuinfo" grep -qw svm /proc/cpuinfo
check dev-kvm "/dev/kvm exists" test -c /dev/kvm
# The outer kernel's tick is periodic, never a one-shot timer (boot.sh's
# highres=off): host QEMU 7.2 re-arms a periodic timer itself, so a timer
# interrupt its TCG loses costs one tick instead of freezing the outer VM for
# good. Normally the tick device is the lapic in clockevent state 2
# (CLOCK_EVT_STATE_PERIODIC). The kernel verifies the lapic timer against the
# PIT for 100 ms at boot, and on a busy host TCG can miss that window ("APIC
# timer disabled due to verification failure", once in a make test-loaded
# run): then the PIT drives the tick, as CPU 0's own device or as the
# broadcast device, also periodic and also re-armed by QEMU. Either way:
# no tick device in one-shot mode and hres_active 0 on every CPU.
# (Clock event states: 2 periodic, 3 one-shot; tick device modes: 0 periodic.)
tick_is_periodic() {
	tl=$(cat /proc/timer_list)
	cpu0=$(printf '%s\n' "$tl" | sed -n '/^Per CPU device: 0/,/^$/p')
	bcast=$(printf '%s\n' "$tl" | sed -n '/^Broadcast device/,/^$/p')
	dev0=$(printf '%s\n' "$cpu0" | sed -n 's/^Clock Event Device: //p')
	mode0=$(printf '%s\n' "$cpu0" | sed -n 's/^ mode: *//p')
	bdev=$(printf '%s\n' "$bcast" | sed -n 's/^Clock Event Device: //p')
	bmode=$(printf '%s\n' "$bcast" | sed -n 's/^ mode: *//p')
	echo "  tick: CPU 0's device $dev0 (state $mode0), broadcast device $bdev (state ${bmode:-none})"
	if printf '%s\n' "$tl" | grep -q '^Tick Device: mode: *1' ||
		printf '%s\n' "$tl" | grep -q 'hres_active *: *1'; then
		return 1
	fi
	case "$dev0:$mode0" in
	lapic:2) return 0 ;;
	pit:2) return 0 ;;
	esac
	# CPU 0's lapic a dummy that the PIT broadcasts to
	[ "$dev0" = lapic ] && [ "$bdev" = pit ] && [ "$bmode" = 2 ]
}
tick_is_periodic
check outer-tick-periodic "the outer kernel's tick is periodic (the lapic, or the PIT when the kernel rejected the lapic timer under load), no high-resolution (one-shot) tick host QEMU could lose" \
	tick_is_periodic
check kvm-create-vm "KVM_CREATE_VM on kvm_amd works (hwlab-vmm --check)" hwlab-vmm --check
hwlab-vmm --check
# where the first SIGBUS comes from: madvise() itself since v6.11
if host_has madvise-hwpoison-ar; then sigbus_from=madvise; else sigbus_from=access; fi
madvise_sigbus "$sigbus_from" || hwlab_failures=$((hwlab_failures + $?))
finish
