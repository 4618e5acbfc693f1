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

# bad input: exit 1 for a bad guest image, 2 for a bad option, and a message
echo 'not an elf file at all' >bad.elf
expect malformed-image 1 'malformed guest image bad.elf: not an ELF file' timed_vmm bad.elf
head -c 100 $GUEST >trunc.elf
expect truncated-image 1 'malformed guest image' timed_vmm trunc.elf
expect missing-image 1 'cannot open guest image' timed_vmm /nonexistent.elf
# poison GPA outside RAM
expect bad-gpa 2 'outside the guest' timed_vmm --poison-gpa 0x40000000 $GUEST
# unknown backing
expect bad-option 2 "bad value 'floppy'" timed_vmm --backing floppy $GUEST

# kill -BUS from another process is not a memory error: no address, nothing
# faulted. The VMM names the sender and the guest runs on (it used to read
# si_addr and exit "fatal").
start_vmm bus.log --passes 0 $GUEST
kill -BUS "$vmm_pid"
wait_for bus.log '"event":"foreign_signal"'
passes_then=$(count_lines bus.log '"event":"guest_pass"')
wait_for bus.log '"event":"guest_pass"' "\"pass\":$((passes_then + 1)),"
stop_vmm bus.log
expect_count kill-bus-reported 1 bus.log '"event":"foreign_signal"' '"signal":"SIGBUS"' \
	'"si_code":"SI_USER"' "\"sender_pid\":$$," '"action":"ignore"'
expect_count kill-bus-runs-on 1 bus.log '"event":"guest_pass"' "\"pass\":$((passes_then + 1)),"
expect_count kill-bus-no-fatal 0 bus.log '"action":"fatal"'
expect_count kill-bus-exit 1 bus.log '"event":"vmm_exit"' '"status":"stopped"'
check kill-bus-rc "VMM exits 0 after SIGTERM (got $vmm_rc)" test "$vmm_rc" -eq 0

# a vCPU that does not stop (here its thread is held in a ptrace stop inside
# KVM_RUN): SIGTERM ends the VMM within its grace time (10 s), naming the
# vCPU and where its thread is, instead of a hang that only a kill -9 ends
start_vmm stuck.log --vcpus 2 --passes 0 $GUEST
tid=$(ls /proc/$vmm_pid/task | grep -vx "$vmm_pid" | tail -n 1)
: >stuck.tracer
thread_stop "$tid" >stuck.tracer 2>&1 &
tracer=$!
n=0
while ! grep -q 'held in ioctl' stuck.tracer && kill -0 $tracer 2>/dev/null && [ $n -lt 300 ]; do
	sleep 0.1
	n=$((n + 1))
done
sed 's/^/  /' stuck.tracer
t0=$(date +%s)
stop_vmm stuck.log
secs=$(($(date +%s) - t0))
kill $tracer 2>/dev/null
wait $tracer 2>/dev/null
check stuck-ends "SIGTERM with a stuck vCPU: the VMM exits 1 in ${secs}s (10 s grace, not the 120 s kill)" \
	test "$vmm_rc" -eq 1 -a "$secs" -lt 60
expect_count stuck-named 1 stuck.log '"event":"vcpu_stuck"' "\"tid\":$tid," '"state":"t"' \
	'still running 10 s after the stop'
expect_count stuck-exit 1 stuck.log '"event":"vmm_exit"' '"status":"stuck"'
check stuck-unpublished "its memslot table is removed" test ! -e "$(memmap_of $vmm_pid)"

# a guest that logs in a loop: guest_log lines within the rate limit (a
# burst of 50, then 20/s), and every line printed or counted as suppressed
t0=$(date +%s)
run_vmm flood.log --guest-log-flood 2000 --passes 1 $GUEST
secs=$(($(date +%s) - t0 + 1))
printed=$(count_lines flood.log '"event":"guest_log"')
held=0
for n in $(json-field flood.log count event=guest_log_suppressed); do
	held=$((held + n))
done
check log-flood-exit "log flood: exits 0 (got $vmm_rc)" test "$vmm_rc" -eq 0
check log-flood-bounded "log flood: $printed guest_log lines in ${secs}s, at most $((50 + 20 * secs))" \
	test "$printed" -le $((50 + 20 * secs))
check log-flood-counted "log flood: $printed printed + $held suppressed = 2001 (2000 and guest up)" \
	test $((printed + held)) -eq 2001

# a failing guest says where it failed (GUEST_FAIL: file:line: why)
expect guest-fail-file-line 1 '"event":"guest_fail","vcpu":0,"reason":"guest/guest.c:' \
	timed_vmm --guest-fail-test $GUEST
finish
