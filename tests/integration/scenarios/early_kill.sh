# Early kill: memory_failure() sends BUS_MCEERR_AO to the VMM as soon as the
# page is poisoned; the VMM injects an action-optional vMCE and the guest
# retires the page before it ever touches it (no AR follows).
. /hwlab/scenarios/_lib.sh
echo 1 >/proc/sys/vm/memory_failure_early_kill

run_vmm ao.log --passes 3 --mce-kill early --poison-gpa 0x6a1000 --poison-pass 1 $GUEST
check vmm-exit-ok "VMM exits 0 after recovery (got $vmm_rc)" test "$vmm_rc" -eq 0
expect_count ao-injected 1 ao.log '"event":"sigbus"' '"si_code":"BUS_MCEERR_AO"' \
	'"gpa":"0x6a1000"' '"lsb":12' '"action":"inject"' '"vcpu":0'
expect_count ao-mce-values 1 ao.log '"si_code":"BUS_MCEERR_AO"' \
	'"mci_status":"0xbd000000000000c0"' '"mcg_status":"0x5"' '"mci_addr":"0x6a1000"' \
	'"mci_misc":"0x8c"'
# no AR from a guest access (since v6.11 the kernel's AR to the thread that
# called madvise(MADV_HWPOISON), the VMM's hook, is what brings the early
# notice instead of an AO: the VMM says so and tells the guest as for an AO)
expect_count no-ar 0 ao.log '"si_code":"BUS_MCEERR_AR"' '"recipient":"guest"'
if host_has madvise-hwpoison-ar; then
	expect_count madvise-ar-as-ao 1 ao.log '"si_code":"BUS_MCEERR_AR"' '"origin":"madvise"' \
		'"action":"told_as_ao"'
else
	expect_count madvise-no-ar 0 ao.log '"si_code":"BUS_MCEERR_AR"'
fi
expect_count guest-retired 1 ao.log '"event":"guest_retired"' '"gpa":"0x6a1000"' \
	'"matches_injection":true' '"mci_status":"0xbd000000000000c0"'
expect_count guest-done 1 ao.log '"event":"guest_done"' '"pages_retired":1' '"checksum_ok":true'
check dmesg-sigbus "kernel log: SIGBUS sent to hwlab-vmm" \
	sh -c "dmesg | grep -q 'Sending SIGBUS to hwlab-vmm'"

# 40 AOs at once for a guest whose #MC handler never clears MCIP: one is
# injected, the rest wait for a machine check that never ends, in a queue of
# 32. None may overflow it (that crashed the VMM), none may vanish: each one
# is injected or reported as not delivered, and the VMM stops cleanly when
# the guest then consumes a poisoned page with MCIP still set.
gpas=
for i in $(seq 0 39); do
	gpas="$gpas --poison-gpa $(printf '%#x' $((0x600000 + i * 4096)))"
done
run_vmm queue.log --mce-kill early --guest-keep-mcip $gpas $GUEST
check queue-exit "MCIP kept with 40 AOs: VMM exits 1, not a crash (got $vmm_rc)" test "$vmm_rc" -eq 1
expect_count queue-injected 1 queue.log '"si_code":"BUS_MCEERR_AO"' '"action":"inject"'
expect_count queue-not-delivered 39 queue.log '"si_code":"BUS_MCEERR_AO"' '"action":"ignore"' \
	'not delivered'
check queue-full-said "the AOs past the 32-entry queue say so" \
	sh -c "grep -q 'injection queue is full' queue.log"
expect_count queue-no-fatal 0 queue.log '"action":"fatal"'
expect_count queue-stop 1 queue.log '"si_code":"BUS_MCEERR_AR"' '"action":"stop"' 'MCG_STATUS.MCIP set'
expect_count queue-vmm-exit 1 queue.log '"event":"vmm_exit"' '"poisoned_pages":40' \
	'"ao_overflows":0' '"ao_not_delivered":39'
# A real AO in a flood of kill -BUS: sent signals are counted apart, so the
# kernel's AO still finds room in the 256-entry ring (1500 kill -BUS once
# filled it and an AO then was dropped). The page is poisoned from outside
# (hwpoison-guest) while a loop sends SIGBUS as fast as it can; as in
# external_poison, the guest may consume the page before the AO is injected
# (AR): either way the AO arrives and the guest gets one machine check.
start_vmm flood.log --passes 0 --mce-kill early $GUEST
(while kill -BUS "$vmm_pid" 2>/dev/null; do :; done) &
flooder=$!
# the flood is on once the VMM has counted more than it writes lines for
wait_for flood.log '"event":"foreign_signal_summary"'
expect flood-tool 0 '"gpa":"0x612000"' hwpoison-guest $vmm_pid 0x612000
wait_for flood.log '"event":"guest_retired"' '"gpa":"0x612000"'
kill $flooder
wait $flooder 2>/dev/null
stop_vmm flood.log
expect_count flood-ao 1 flood.log '"si_code":"BUS_MCEERR_AO"' '"gpa":"0x612000"'
expect_count flood-one-mce 1 flood.log '"event":"sigbus"' '"gpa":"0x612000"' '"action":"inject"'
expect_count flood-retired 1 flood.log '"event":"guest_retired"' '"gpa":"0x612000"' \
	'"matches_injection":true'
expect_count flood-lines 5 flood.log '"event":"foreign_signal"'
flood_sent=$(json-field flood.log foreign_signals event=vmm_exit)
check flood-counted "vmm_exit: ao_overflows 0, foreign_signals ${flood_sent:-none} (more than 5)" \
	sh -c "grep -q '\"event\":\"vmm_exit\".*\"ao_overflows\":0,' flood.log && [ '${flood_sent:-0}' -gt 5 ]"
finish
