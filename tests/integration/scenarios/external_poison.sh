# hwpoison-guest poisons a running guest from outside, through the outer
# kernel's debugfs corrupt-pfn injector, and refuses bad requests clearly.
. /hwlab/scenarios/_lib.sh

echo 1 >/proc/sys/vm/memory_failure_early_kill
start_vmm early.log --passes 0 --mce-kill early $GUEST
hwpoison-guest $vmm_pid 0x612000 >tool.out 2>&1
check tool-early "hwpoison-guest PID 0x612000 succeeds" sh -c "grep -q '\"gpa\":\"0x612000\"' tool.out"
wait_for early.log '"event":"guest_retired"' '"gpa":"0x612000"'

# bad requests, against the same live VMM
hwpoison-guest $vmm_pid 0x40000000 >bad-gpa.out 2>&1
check tool-bad-gpa "GPA outside RAM: exit 1, clear message" \
	sh -c "[ $? -eq 1 ] && grep -q 'is not in the guest RAM of pid' bad-gpa.out"
hwpoison-guest --debugfs /nonexistent $vmm_pid 0x613000 >no-debugfs.out 2>&1
check tool-no-debugfs "no debugfs: exit 1, clear message" \
	sh -c "[ $? -eq 1 ] && grep -q 'mount debugfs' no-debugfs.out"
hwpoison-guest 999999 0x613000 >no-pid.out 2>&1
check tool-no-pid "pid gone: exit 1, clear message" \
	sh -c "[ $? -eq 1 ] && grep -q 'no such process' no-pid.out"
hwpoison-guest $vmm_pid nonsense >bad-arg.out 2>&1
check tool-bad-arg "malformed GPA: exit 1, clear message" \
	sh -c "[ $? -eq 1 ] && grep -q 'is not a guest-physical address' bad-arg.out"
stop_vmm early.log
check early-vmm-exit "VMM stopped cleanly by SIGTERM (got $vmm_rc)" test "$vmm_rc" -eq 0
expect_count early-ao 1 early.log '"si_code":"BUS_MCEERR_AO"' '"gpa":"0x612000"' '"action":"inject"'
expect_count early-retired 1 early.log '"event":"guest_retired"' '"gpa":"0x612000"' \
	'"matches_injection":true'
expect_count early-stopped 1 early.log '"event":"vmm_exit"' '"status":"stopped"'

echo 0 >/proc/sys/vm/memory_failure_early_kill
start_vmm late.log --passes 0 $GUEST
hwpoison-guest $vmm_pid 0x9ff000 >tool2.out 2>&1
check tool-late "hwpoison-guest PID 0x9ff000 succeeds" sh -c "grep -q '\"gpa\":\"0x9ff000\"' tool2.out"
wait_for late.log '"event":"guest_retired"' '"gpa":"0x9ff000"'
stop_vmm late.log
expect_count late-ar 1 late.log '"si_code":"BUS_MCEERR_AR"' '"gpa":"0x9ff000"' '"action":"inject"' \
	'"mcg_status":"0x7"'
expect_count late-retired 1 late.log '"event":"guest_retired"' '"gpa":"0x9ff000"' \
	'"matches_injection":true'
check late-gone "memslot table removed at exit" test ! -e /tmp/hwlab-vmm.$vmm_pid.memmap
finish
