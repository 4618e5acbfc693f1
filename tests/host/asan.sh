#!/usr/bin/env bash
# The unit tests and hwlab-vmm built with AddressSanitizer and UBSan
# (make asan-build: build/asan, dynamically linked) run what the plain build
# runs: the unit tests, always, and tests/host/vmm_runs.sh (its KVM runs
# where this host has /dev/kvm). Any sanitizer report fails a check: the
# runtimes stop at the first report (halt_on_error, and the build does not
# recover from UB), and the output is searched for one as well, because a
# run fed a bad image is expected to exit non-zero anyway.
# Exits with the number of failed checks.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/tests/lib/check.sh"
asan=${HWLAB_ASAN_BUILD:-$here/build/asan}
logs=$here/build/logs
mkdir -p "$logs"
export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

# sanitizer_report FILE: print the first sanitizer report line in FILE, if any
sanitizer_report() {
	grep -a -m 1 -e 'runtime error' -e 'ERROR: AddressSanitizer' -e 'ERROR: LeakSanitizer' "$1"
}

if [ ! -x "$asan/unit-tests" ] || [ ! -x "$asan/hwlab-vmm" ]; then
	fail asan-build "no $asan/unit-tests or $asan/hwlab-vmm: run make asan-build first"
	finish
fi

unit_log=$logs/asan-unit-tests.log
"$asan/unit-tests" >"$unit_log" 2>&1
rc=$?
summary=$(grep -a '^unit: ' "$unit_log")
if report=$(sanitizer_report "$unit_log"); then
	fail asan-unit-tests "sanitizer report (build/logs/asan-unit-tests.log): $report"
elif [ "$rc" -eq 0 ] && [[ $summary == *' 0 failed, '* ]]; then
	pass asan-unit-tests "$summary, under ASan+UBSan"
else
	fail asan-unit-tests "exit $rc, '${summary:-no summary}' (build/logs/asan-unit-tests.log)"
fi

HWLAB_CHECK_PREFIX=asan- "$here/tests/host/vmm_runs.sh" "$asan/hwlab-vmm" "$logs"
hwlab_failures=$((hwlab_failures + $?))
if report=$(sanitizer_report "$logs/asan-vmm-output.log"); then
	fail asan-vmm-clean "sanitizer report (build/logs/asan-vmm-output.log): $report"
else
	pass asan-vmm-clean "no sanitizer report in the output of any VMM run above"
fi
# Exits under LeakSanitizer, bounded. Once in 15 start/stop cycles the ASan
# VMM did not exit after its vmm_exit line: LeakSanitizer's tracer (a clone
# of the VMM that ptrace-stops every thread before it scans memory) sat in
# wait4 for a thread that never stopped, and the main thread span in
# sched_yield waiting for it, for ever. Not reproduced since (30 cycles of
# the VMM, 200 exits of a bare KVM program with a vCPU that ran); so every
# exit here is bounded, and a hang is its own failure that names each
# thread, where it is, and which thread the tracer waits for, instead of a
# make test that never ends.
# thread_report PID: each thread's comm, state, wchan, syscall, and the
# tracer's (a child process of PID) wait target
thread_report() {
	local t c
	for t in /proc/"$1"/task/*; do
		printf '[tid %s %s %s wchan=%s syscall=%s] ' "${t##*/}" "$(cat "$t/comm" 2>/dev/null)" \
			"$(cut -d' ' -f3 "$t/stat" 2>/dev/null)" "$(cat "$t/wchan" 2>/dev/null)" \
			"$(cut -d' ' -f1,2 "$t/syscall" 2>/dev/null)"
	done
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		# wait4(pid, ...): syscall 61, its first argument the tid it waits for
		printf '[child %s (LSan tracer?) syscall=%s] ' "$c" "$(cut -d' ' -f1,2 /proc/"$c"/syscall 2>/dev/null)"
	done
}
# gone PID: the process has exited (a zombie child counts as exited)
gone() { [ ! -e /proc/"$1"/stat ] || [ "$(cut -d' ' -f3 /proc/"$1"/stat 2>/dev/null)" = Z ]; }
guest=$here/build/guest.elf
cycles=15 exit_limit=60 hangs=0 hang_detail=
if ! "$asan/hwlab-vmm" --check >/dev/null 2>&1; then
	skip asan-exit-cycles "no usable /dev/kvm on this host: the start/stop cycles need one"
	finish
fi
for ((i = 1; i <= cycles; i++)); do
	cycle_log=$logs/asan-exit-cycle.log
	rm -f "$cycle_log"
	"$asan/hwlab-vmm" --passes 0 "$guest" >"$cycle_log" 2>&1 &
	pid=$!
	# until the guest runs (bounded by the VMM's life and 60 s)
	for ((n = 0; n < 600; n++)); do
		grep -q '"event":"guest_log"' "$cycle_log" 2>/dev/null || gone $pid || { sleep 0.1; continue; }
		break
	done
	kill -TERM $pid 2>/dev/null
	for ((n = 0; n < exit_limit * 10; n++)); do
		gone $pid && break
		sleep 0.1
	done
	if ! gone $pid; then
		hangs=$((hangs + 1))
		grep -q '"event":"vmm_exit"' "$cycle_log" && where='after its vmm_exit line (at exit: LeakSanitizer?)' ||
			where='before its vmm_exit line'
		hang_detail="$hang_detail cycle $i: no exit ${exit_limit}s after SIGTERM, $where: $(thread_report $pid)"
		cp "$cycle_log" "$logs/asan-exit-hang-$i.log"
		kill -KILL $pid 2>/dev/null
	fi
	wait $pid 2>/dev/null
	cat "$cycle_log" >>"$logs/asan-vmm-output.log"
done
if [ $hangs -eq 0 ]; then
	pass asan-exit-cycles "$cycles start/stop cycles with detect_leaks=1: each exited within ${exit_limit}s of SIGTERM"
else
	fail asan-exit-hang "$hangs of $cycles exits hung (killed; logs build/logs/asan-exit-hang-*.log):$hang_detail"
fi
if report=$(sanitizer_report "$logs/asan-vmm-output.log"); then
	fail asan-exit-clean "sanitizer report in a start/stop cycle: $report"
fi
finish
