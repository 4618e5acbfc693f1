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
elif [ "$rc" -eq 0 ] && [[ $summary == *' 0 failed' ]]; then
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
finish
