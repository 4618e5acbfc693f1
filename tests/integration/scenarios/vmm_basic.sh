# The VMM runs the guest to completion with no memory error, and turns bad
# input into a clear message and a non-zero exit.
. /hwlab/scenarios/_lib.sh

run_vmm run.log --vcpus 2 --passes 2 $GUEST
check vmm-exit-ok "clean run exits 0 (got $vmm_rc)" test "$vmm_rc" -eq 0
expect_count guest-done-vcpu0 1 run.log '"event":"guest_done"' '"vcpu":0' '"checksum_ok":true'
expect_count guest-done-vcpu1 1 run.log '"event":"guest_done"' '"vcpu":1' '"checksum_ok":true'
expect_count no-sigbus 0 run.log '"event":"sigbus"'
expect_count vmm-exit-report 1 run.log '"event":"vmm_exit"' '"status":"ok"' '"injected":0'

# four memslots: translation picks the slot that holds the HVA
echo 0 >/proc/sys/vm/memory_failure_early_kill
run_vmm slots.log --slots 4 --poison-gpa 0xc01000 $GUEST
check slots-exit "4 memslots, poison in slot 3: exits 0 (got $vmm_rc)" test "$vmm_rc" -eq 0
expect_count slots-ar 1 slots.log '"si_code":"BUS_MCEERR_AR"' '"gpa":"0xc01000"' '"action":"inject"'
expect_count slots-retired 1 slots.log '"event":"guest_retired"' '"gpa":"0xc01000"' \
	'"matches_injection":true'

echo 'not an elf file at all' >bad.elf
run_vmm bad.log bad.elf
check malformed-image "malformed guest image: exit 1 with a message" \
	sh -c "[ $vmm_rc -eq 1 ] && grep -q 'malformed guest image bad.elf: not an ELF file' bad.log.err"
head -c 100 $GUEST >trunc.elf
run_vmm trunc.log trunc.elf
check truncated-image "truncated guest image: exit 1 with a message" \
	sh -c "[ $vmm_rc -eq 1 ] && grep -q 'malformed guest image' trunc.log.err"
run_vmm missing.log /nonexistent.elf
check missing-image "missing guest image: exit 1 with a message" \
	sh -c "[ $vmm_rc -eq 1 ] && grep -q 'cannot open guest image' missing.log.err"
run_vmm badgpa.log --poison-gpa 0x40000000 $GUEST
check bad-gpa "poison GPA outside RAM: exit 2 with a message" \
	sh -c "[ $vmm_rc -eq 2 ] && grep -q 'outside the guest' badgpa.log.err"
run_vmm badopt.log --backing floppy $GUEST
check bad-option "unknown backing: exit 2 with a message" \
	sh -c "[ $vmm_rc -eq 2 ] && grep -q \"bad value 'floppy'\" badopt.log.err"
finish
