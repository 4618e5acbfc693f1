# The VMM built with AddressSanitizer and UBSan (make asan-build; packed with
# its shared libraries as /hwlab/asan/hwlab-vmm) on the outer VM's KVM: the
# runs where a hostile or broken guest, a burst of signals or bad input
# reach the VMM's memory handling, each checked for a clean exit status and
# for no sanitizer report. The machines the suite runs on have no /dev/kvm
# of their own, so this is where the sanitized VMM meets a real guest.
. /hwlab/scenarios/_lib.sh
VMM=/hwlab/asan/hwlab-vmm
# handle_sigbus=0: the VMM's own SIGBUS handler is the one under test
export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:handle_sigbus=0:allow_user_segv_handler=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

if [ ! -x "$VMM" ]; then
	fail asan-vmm "no $VMM in the initramfs (make asan-build, then make initramfs)"
	finish
fi

# sanitized NAME WANT_RC LOG: the run exited WANT_RC and printed no sanitizer report
sanitized() {
	report=$(grep -a -h -m 1 -e 'runtime error' -e 'ERROR: AddressSanitizer' \
		-e 'ERROR: LeakSanitizer' "$3" "$3.err")
	if [ -n "$report" ]; then
		fail "$1" "sanitizer report: $report"
	else
		check "$1" "exit $2 (got $vmm_rc), no sanitizer report" test "$vmm_rc" -eq "$2"
	fi
}

echo 0 >/proc/sys/vm/memory_failure_early_kill
run_vmm clean.log --vcpus 2 --passes 3 $GUEST
sanitized asan-clean 0 clean.log
expect_count asan-clean-done 2 clean.log '"event":"guest_done"' '"checksum_ok":true'

run_vmm ar.log --vcpus 2 --poison-gpa 0x523000 --poison-gpa 0xa00000 --poison-gpa 0xe01000 $GUEST
sanitized asan-late-kill 0 ar.log
expect_count asan-late-kill-injected 3 ar.log '"si_code":"BUS_MCEERR_AR"' '"action":"inject"'

run_vmm repeat.log --guest-repeat-pass --poison-gpa 0x524000 $GUEST
sanitized asan-repeat-pass 0 repeat.log

run_vmm reset.log --guest-no-mce --on-unrecoverable reset --poison-gpa 0x500000 $GUEST
sanitized asan-reset 0 reset.log
expect_count asan-reset-boot2 1 reset.log '"event":"reset"' '"boot":2'

run_vmm retry.log --guest-retry-ar --poison-gpa 0x500000 $GUEST
sanitized asan-retry-ar 1 retry.log

echo 1 >/proc/sys/vm/memory_failure_early_kill
gpas=
for i in $(seq 0 39); do
	gpas="$gpas --poison-gpa $(printf '%#x' $((0x600000 + i * 4096)))"
done
run_vmm queue.log --mce-kill early --guest-keep-mcip $gpas $GUEST
sanitized asan-ao-burst 1 queue.log
expect_count asan-ao-burst-exit 1 queue.log '"event":"vmm_exit"' '"ao_not_delivered":39'

run_vmm flood.log --guest-log-flood 2000 --passes 1 $GUEST
sanitized asan-log-flood 0 flood.log

start_vmm bus.log --passes 0 $GUEST
kill -BUS "$vmm_pid"
wait_for bus.log '"event":"foreign_signal"'
stop_vmm bus.log
sanitized asan-kill-bus 0 bus.log

echo 'not an elf file at all' >bad.elf
run_vmm bad.log bad.elf
sanitized asan-bad-image 1 bad.log
head -c 100 $GUEST >trunc.elf
run_vmm trunc.log trunc.elf
sanitized asan-truncated-image 1 trunc.log
mkfifo fifo
run_vmm fifo.log fifo
sanitized asan-fifo-image 1 fifo.log
run_vmm fail.log --guest-fail-test $GUEST
sanitized asan-guest-fail 1 fail.log
finish
