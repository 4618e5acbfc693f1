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
# MCA broadcast (Intel's encoding on a family-0xf vCPU, as QEMU decides it):
# each #MC reaches the other vCPU as bank 1 VAL|UC without EN, which the
# guest recognises as another CPU's and resumes from. Above, both vCPUs take
# their own #MCs at about the same time, so a broadcast may find the other
# one in its own #MC (then it is reported and not sent): whatever was sent
# must have been seen, with QEMU's values.
expect_count broadcast-on 1 multi.log '"event":"vmm_start"' '"mce_encoding":"intel"' \
	'"mca_broadcast":true'
sent=$(count_lines multi.log '"event":"mce_broadcast"' '"action":"inject"')
check broadcast-values "the $sent broadcast(s) sent: bank 1, MCi_STATUS VAL|UC, MCG_STATUS MCIP|RIPV, as QEMU's" \
	test "$(count_lines multi.log '"event":"mce_broadcast"' '"action":"inject"' '"bank":1' \
		'"mci_status":"0xa000000000000000"' '"mcg_status":"0x5"')" -eq "$sent"
for v in 0 1; do
	check broadcast-seen-vcpu$v "vCPU $v's guest saw every broadcast sent to it" test \
		"$(count_lines multi.log '"event":"mce_broadcast"' '"action":"inject"' "\"vcpu\":$v,")" -eq \
		"$(count_lines multi.log '"event":"guest_mc_broadcast"' "\"vcpu\":$v,")"
done
check broadcast-no-fail "no guest_fail" sh -c "! grep -q '\"event\":\"guest_fail\"' multi.log"

# One page, consumed by vCPU 0 alone, both vCPUs running until stopped: its
# #MC must reach vCPU 1, which has none of its own, and vCPU 1 must see it.
start_vmm bcast.log --vcpus 2 --passes 0 --poison-gpa 0x480000 $GUEST
wait_for bcast.log '"event":"guest_mc_broadcast"'
stop_vmm bcast.log
expect_count broadcast-sent 1 bcast.log '"event":"mce_broadcast"' '"vcpu":1,' '"origin_vcpu":0,' \
	'"action":"inject"' '"bank":1' '"mci_status":"0xa000000000000000"' '"mcg_status":"0x5"'
expect_count broadcast-seen 1 bcast.log '"event":"guest_mc_broadcast"' '"vcpu":1,' '"bank":1' \
	'"mci_status":"0xa000000000000000"' '"mcg_status":"0x5"'
expect_count broadcast-own-mc 1 bcast.log '"event":"guest_retired"' '"vcpu":0,' '"gpa":"0x480000"'
check broadcast-runs-on "no guest_fail; the VMM stopped cleanly" \
	sh -c "! grep -q '\"event\":\"guest_fail\"' bcast.log && grep -q '\"event\":\"vmm_exit\",\"status\":\"stopped\"' bcast.log"
finish
