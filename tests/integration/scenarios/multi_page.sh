# Several pages on several vCPUs: each AR goes to the vCPU that consumed the
# poison; the same page poisoned twice is injected once.
. /hwlab/scenarios/_lib.sh
echo 0 >/proc/sys/vm/memory_failure_early_kill

# vCPU 0 works on [0x400000, 0xa00000), vCPU 1 on [0xa00000, 0x1000000)
run_vmm multi.log --vcpus 2 --passes 3 --poison-gpa 0x480000 --poison-gpa 0xb00000 \
	--poison-gpa 0xc37000 --poison-gpa 0x480000 $GUEST
check vmm-exit-ok "VMM exits 0 (got $vmm_rc)" test "$vmm_rc" -eq 0
expect_count ar-vcpu0 1 multi.log '"si_code":"BUS_MCEERR_AR"' '"gpa":"0x480000"' \
	'"action":"inject"' '"vcpu":0'
expect_count ar-vcpu1-a 1 multi.log '"si_code":"BUS_MCEERR_AR"' '"gpa":"0xb00000"' \
	'"action":"inject"' '"vcpu":1'
expect_count ar-vcpu1-b 1 multi.log '"si_code":"BUS_MCEERR_AR"' '"gpa":"0xc37000"' \
	'"action":"inject"' '"vcpu":1'
expect_count injected-total 3 multi.log '"event":"sigbus"' '"action":"inject"'
expect_count retired-total 3 multi.log '"event":"guest_retired"' '"matches_injection":true'
expect_count done-vcpu0 1 multi.log '"event":"guest_done"' '"vcpu":0' '"pages_retired":1' \
	'"checksum_ok":true'
expect_count done-vcpu1 1 multi.log '"event":"guest_done"' '"vcpu":1' '"pages_retired":2' \
	'"checksum_ok":true'
expect_count vmm-exit 1 multi.log '"event":"vmm_exit"' '"injected":3' '"poisoned_pages":3'
finish
