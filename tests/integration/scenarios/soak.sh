# Soak: N poison events in one guest run (100 in make test; make soak N=1000
# passes hwlab.soak_events=N on the kernel command line), each acknowledged by
# the guest exactly once, with the time from the corrupt-pfn write to the
# guest's acknowledgement, its median/p99/max and where the slowest event
# spent its time.
. /hwlab/scenarios/_lib.sh
echo 1 >/proc/sys/vm/memory_failure_early_kill
events=100
for arg in $(cat /proc/cmdline); do
	case "$arg" in hwlab.soak_events=*) events=${arg#hwlab.soak_events=} ;; esac
done

VMM_TIMEOUT=$((300 + events / 2)) start_vmm soak.log --passes 0 --mce-kill early $GUEST
hwpoison-guest --soak "$events" --log soak.log $vmm_pid 0x500000 >soak.out 2>&1
soak_rc=$?
kill -TERM "$vmm_pid"
wait "$vmm_pid"
vmm_rc=$?
grep -v '"event":"sigbus"\|"event":"guest_retired"\|"event":"guest_pass"' soak.log | sed 's/^/  vmm: /'
# every event of a page that got more than one machine check, for diagnosis
for gpa in $(json-field soak.log gpa action=inject | sort | uniq -d); do
	grep "\"gpa\":\"$gpa\"" soak.log | sed 's/^/  duplicate: /'
done
summary=$(grep '"event":"soak"' soak.out)
echo "HWLAB-MEASURE soak $summary"
check soak-rc "hwpoison-guest --soak reports no lost or duplicated event (exit $soak_rc)" \
	test "$soak_rc" -eq 0
check soak-acked "all $events events acknowledged" \
	sh -c "echo '$summary' | grep -q '\"acked\":$events,\"lost\":0,\"duplicated\":0'"
# Mostly AO; when the guest touches the page before the AO is delivered it is
# an AR instead, and the late AO is then reported as ignored. Either way one
# machine check per page.
expect_count soak-injected "$events" soak.log '"event":"sigbus"' '"action":"inject"'
expect_count soak-retired "$events" soak.log '"event":"guest_retired"' '"matches_injection":true'
expect_count soak-vmm-exit 1 soak.log '"event":"vmm_exit"' '"status":"stopped"' \
	"\"injected\":$events," "\"poisoned_pages\":$events," '"ao_overflows":0'
check soak-breakdown "the slowest event's time is split into kernel, VMM, guest and tool" \
	sh -c "echo '$summary' | grep -q '\"slowest\":{.*\"kernel_ns\":[0-9]*,\"vmm_ns\":[0-9]*,\"guest_ns\":[0-9]*,\"tool_ns\":[0-9]*,\"vmm_monitor_ns\":[0-9]*,\"vmm_vcpu_ns\":[0-9]*}'"
check soak-vmm-rc "VMM exits 0 (got $vmm_rc)" test "$vmm_rc" -eq 0
finish
