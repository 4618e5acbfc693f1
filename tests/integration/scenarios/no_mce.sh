# A guest without machine-check support (CR4.MCE clear) consumes poison: the
# VMM says so and stops, or resets the guest onto remapped memory, instead of
# letting KVM triple-fault it.
. /hwlab/scenarios/_lib.sh
echo 0 >/proc/sys/vm/memory_failure_early_kill

run_vmm stop.log --guest-no-mce --poison-gpa 0x500000 $GUEST
check stop-exit "stop: VMM exits 1 (got $vmm_rc)" test "$vmm_rc" -eq 1
expect_count stop-report 1 stop.log '"si_code":"BUS_MCEERR_AR"' '"gpa":"0x500000"' \
	'"action":"stop"' 'CR4.MCE clear'
expect_count stop-no-triple-fault 0 stop.log 'triple fault'
expect_count stop-vmm-exit 1 stop.log '"event":"vmm_exit"' '"status":"fail"'

run_vmm reset.log --guest-no-mce --on-unrecoverable reset --poison-gpa 0x500000 $GUEST
check reset-exit "reset: VMM exits 0 after the guest reruns (got $vmm_rc)" test "$vmm_rc" -eq 0
expect_count reset-report 1 reset.log '"si_code":"BUS_MCEERR_AR"' '"action":"reset"'
expect_count reset-remap 1 reset.log '"event":"remap"' '"gpa":"0x500000"' '"bytes":4096'
expect_count reset-boot2 1 reset.log '"event":"reset"' '"boot":2'
expect_count reset-done 1 reset.log '"event":"guest_done"' '"boot":2' '"pages_retired":0' \
	'"checksum_ok":true'
expect_count reset-vmm-exit 1 reset.log '"event":"vmm_exit"' '"status":"ok"' '"resets":1'

# A guest whose #MC handler never clears MCIP: the second error would be a
# triple fault in KVM; the VMM reports it and stops.
run_vmm mcip.log --guest-keep-mcip --poison-gpa 0x500000 --poison-gpa 0x900000 $GUEST
check mcip-exit "MCIP still set: VMM exits 1 (got $vmm_rc)" test "$vmm_rc" -eq 1
expect_count mcip-first 1 mcip.log '"si_code":"BUS_MCEERR_AR"' '"action":"inject"'
expect_count mcip-second 1 mcip.log '"si_code":"BUS_MCEERR_AR"' '"action":"stop"' \
	'MCG_STATUS.MCIP set'
expect_count mcip-no-triple-fault 0 mcip.log 'triple fault'

# A guest that returns into the access that consumed the poison would take
# the same AR forever; the VMM stops it after 16.
run_vmm retry.log --guest-retry-ar --poison-gpa 0x500000 $GUEST
check retry-exit "same AR again and again: VMM exits 1 (got $vmm_rc)" test "$vmm_rc" -eq 1
expect_count retry-injected 16 retry.log '"si_code":"BUS_MCEERR_AR"' '"gpa":"0x500000"' \
	'"action":"inject"'
expect_count retry-fatal 1 retry.log '"action":"fatal"' 'same poisoned page again'
finish
