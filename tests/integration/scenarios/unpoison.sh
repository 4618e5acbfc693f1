# Poison through the debugfs corrupt-pfn injector (PFN from pagemap), then
# unpoison-pfn gives the page back; HardwareCorrupted follows both.
. /hwlab/scenarios/_lib.sh
echo 0 >/proc/sys/vm/memory_failure_early_kill
hc0=$(hardware_corrupted_kb)

run_vmm pfn.log --poison-method corrupt-pfn --poison-gpa 0x700000 $GUEST
check vmm-exit-ok "VMM exits 0 (got $vmm_rc)" test "$vmm_rc" -eq 0
expect_count hook-corrupt-pfn 1 pfn.log '"event":"poison_hook"' '"method":"corrupt-pfn"' '"ok":true'
expect_count ar-injected 1 pfn.log '"si_code":"BUS_MCEERR_AR"' '"gpa":"0x700000"' '"action":"inject"'
expect_count guest-done 1 pfn.log '"event":"guest_done"' '"pages_retired":1' '"checksum_ok":true'
check dmesg-injected "kernel log: Injecting memory failure at pfn" \
	sh -c "dmesg | grep -q 'Injecting memory failure at pfn'"
hc1=$(hardware_corrupted_kb)
check meminfo-up "HardwareCorrupted +4 kB after corrupt-pfn ($hc0 -> $hc1)" test $((hc1 - hc0)) -eq 4

pfn=$(json-field pfn.log pfn event=poison_hook method=corrupt-pfn)
echo "$pfn" >/sys/kernel/debug/hwpoison/unpoison-pfn
check unpoison-write "unpoison-pfn accepted $pfn" test $? -eq 0
hc2=$(hardware_corrupted_kb)
check meminfo-down "HardwareCorrupted back after unpoison-pfn ($hc1 -> $hc2)" test "$hc2" -eq "$hc0"
check dmesg-unpoison "kernel log: Software-unpoisoned page" \
	sh -c "dmesg | grep -q 'Software-unpoisoned page'"

run_vmm again.log --passes 2 $GUEST
check next-run "the next run after unpoison is clean (got $vmm_rc)" test "$vmm_rc" -eq 0
finish
