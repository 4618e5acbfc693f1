# Late kill: the poison is found (MADV_HWPOISON) while nothing is told; when
# the guest next touches the page, KVM sends BUS_MCEERR_AR to the vCPU thread,
# the VMM injects an action-required vMCE and the guest recovers.
. /hwlab/scenarios/_lib.sh
echo 0 >/proc/sys/vm/memory_failure_early_kill
hc0=$(hardware_corrupted_kb)

run_vmm ar.log --passes 3 --poison-gpa 0x523000 --poison-pass 1 $GUEST
check vmm-exit-ok "VMM exits 0 after recovery (got $vmm_rc)" test "$vmm_rc" -eq 0
expect_count poison-hook 1 ar.log '"event":"poison_hook"' '"gpa":"0x523000"' '"ok":true'
expect_count ar-injected 1 ar.log '"event":"sigbus"' '"si_code":"BUS_MCEERR_AR"' \
	'"gpa":"0x523000"' '"lsb":12' '"pages":1' '"action":"inject"' '"vcpu":0'
expect_count ar-mce-values 1 ar.log '"si_code":"BUS_MCEERR_AR"' \
	'"mci_status":"0xbd80000000000134"' '"mcg_status":"0x7"' '"mci_addr":"0x523000"' \
	'"mci_misc":"0x8c"' '"bank":9'
expect_count no-ao 0 ar.log '"si_code":"BUS_MCEERR_AO"'
expect_count guest-retired 1 ar.log '"event":"guest_retired"' '"gpa":"0x523000"' \
	'"pages":1' '"matches_injection":true' '"mci_status":"0xbd80000000000134"'
expect_count guest-done 1 ar.log '"event":"guest_done"' '"pages_retired":1' '"errors":0' \
	'"checksum_ok":true'
check dmesg-recovery "kernel log: memory failure recovered" \
	sh -c "dmesg | grep -q 'Memory failure: 0x[0-9a-f]*: recovery action for dirty LRU page: Recovered'"
hc1=$(hardware_corrupted_kb)
check meminfo "HardwareCorrupted grew by 4 kB ($hc0 -> $hc1)" test $((hc1 - hc0)) -eq 4

# A guest that repeats its pass numbers: the test hook still fires once (a
# second run would poison the same, already isolated page again).
run_vmm repeat.log --guest-repeat-pass --poison-gpa 0x524000 $GUEST
check repeat-exit "pass numbers repeated: VMM exits 0 (got $vmm_rc)" test "$vmm_rc" -eq 0
expect_count repeat-passes 6 repeat.log '"event":"guest_pass"'
expect_count repeat-hook-once 1 repeat.log '"event":"poison_hook"'
expect_count repeat-one-inject 1 repeat.log '"si_code":"BUS_MCEERR_AR"' '"gpa":"0x524000"' \
	'"action":"inject"'
expect_count repeat-done 1 repeat.log '"event":"guest_done"' '"pages_retired":1' '"checksum_ok":true'

# A hostile guest points a ucall at the page it was just told is poisoned.
# The VMM copies ucalls with process_vm_readv(), which fails on a poisoned
# page; a plain copy would consume the poison itself (SIGBUS AR outside
# KVM_RUN: exit 3, "the VMM itself consumed poisoned guest memory").
run_vmm hostile.log --guest-ucall-at-retired --poison-gpa 0x526000 $GUEST
check hostile-exit "ucall at a poisoned page: VMM exits 1, not 3 (got $vmm_rc)" test "$vmm_rc" -eq 1
expect_count hostile-reported 1 hostile.log '"event":"guest_fail"' \
	'ucall at GPA 0x526000, which cannot be read (poisoned memory)'
expect_count hostile-no-fatal 0 hostile.log '"action":"fatal"'
expect_count hostile-vmm-exit 1 hostile.log '"event":"vmm_exit"' '"status":"fail"'
finish
