#!/usr/bin/env bash
# The project's test command (make test): host unit tests, then every
# integration scenario booted in its own outer VM. Each assertion counts as
# passed, failed or skipped (a check that cannot run on this host or VM);
# the last line is "N passed, N failed, N skipped", which CI parses.
#
# Usage: tests/run.sh [SCENARIO...]   (default: all, in the order of
#                                      tests/integration/scenarios.table)
# Env:   HWLAB_BOOT_TIMEOUT  seconds per outer-VM boot, for every scenario
#                            (default: the scenario's timeout in the table)
#        HWLAB_CPU_HOG       run N busy loops beside the whole suite (make
#                            test-loaded: one per core), so that a test that
#                            waits for time instead of for state shows up
#        HWLAB_KERNEL        the outer kernel (outer-qemu/boot.sh; default
#                            build/bzImage)
#        HWLAB_TIME_FACTOR   a slower kernel's factor on every bound: the
#                            table's boot timeouts and the waits in the VM
#                            (outer-qemu/boot.sh; default 1)
#        HWLAB_LOGS          where the logs go (default build/logs)
#        HWLAB_HOST_CHECKS=0 the scenarios alone: no unit tests or host-side
#                            checks
#        HWLAB_SPLAT_CHECK=1 after each scenario, one check per lockdep,
#                            might_sleep, VM_BUG_ON, BUG:, WARNING: or KASAN
#                            report of the outer kernel in its log
#                            (tests/host/kernel_splats.sh)
# make test-debug-kernel sets the last five for the debug kernel.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/tests/lib/scenario_table.sh"
logs=${HWLAB_LOGS:-$here/build/logs}
factor=${HWLAB_TIME_FACTOR:-1}
passed=0 failed=0 skipped=0 retried=
mkdir -p "$logs"

die() { echo "run.sh: error: $*" >&2; exit 2; }
case $factor in *[!0-9]* | 0*) die "HWLAB_TIME_FACTOR must be a whole number from 1, not '$factor'" ;; esac

# The table and the scripts must agree before anything runs: a scenario
# missing from the table would silently never run, a row without a script
# would boot a VM only to fail.
table_rows=$(scenario_rows) || die "malformed $scenario_table (see above)"
if ! mismatches=$(scenario_table_mismatches); then
	echo "$mismatches" | sed 's/^/run.sh: error: /' >&2
	die "tests/integration/scenarios.table and tests/integration/scenarios/*.sh must list the same scenarios"
fi
if [ $# -gt 0 ]; then
	scenarios=("$@")
	for s in "${scenarios[@]}"; do
		scenario_row "$s" >/dev/null ||
			die "unknown scenario '$s' (not in tests/integration/scenarios.table)"
	done
else
	mapfile -t scenarios < <(awk '{ print $1 }' <<<"$table_rows")
fi

# The CPU hog: busy shells at the lowest priority would yield to the tests,
# so they run at the same priority as everything else, as a busy CI machine's
# other jobs do.
hog_pids=()
stop_hogs() { [ ${#hog_pids[@]} -eq 0 ] || kill "${hog_pids[@]}" 2>/dev/null; }
trap stop_hogs EXIT
if [ "${HWLAB_CPU_HOG:-0}" -gt 0 ]; then
	for _ in $(seq "$HWLAB_CPU_HOG"); do
		( while :; do :; done ) &
		hog_pids+=($!)
	done
	echo "== $HWLAB_CPU_HOG CPU hog(s) running beside the tests (pids ${hog_pids[*]})"
fi

# tally_checks FILE: show the HWLAB-CHECK lines (tests/lib/check.sh's or
# madvise_sigbus's) in FILE without the prefix, set p, f and k to how many
# passed, failed and were skipped, and add them to the totals. grep -a: a
# console log may hold binary noise.
tally_checks() {
	grep -a '^HWLAB-CHECK ' "$1" | sed 's/^HWLAB-CHECK //'
	p=$(grep -ac '^HWLAB-CHECK PASS ' "$1")
	f=$(grep -ac '^HWLAB-CHECK FAIL ' "$1")
	k=$(grep -ac '^HWLAB-CHECK SKIP ' "$1")
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + k))
}

# run_checks NAME COMMAND...: run a host-side checker, keep what it prints in
# build/logs/NAME.log and tally its checks
run_checks() {
	local log=$logs/$1.log
	shift
	"$@" >"$log"
	tally_checks "$log"
}

# HWLAB_HOST_CHECKS=0 (make test-debug-kernel): the scenarios alone
if [ "${HWLAB_HOST_CHECKS:-1}" = 1 ]; then
	echo "== host unit tests"
	unit_out=$("$here/build/unit-tests")
	unit_rc=$?
	echo "$unit_out"
	# a skipped unit test (UNIT_SKIP: no usable /dev/kvm, say) is a skipped check
	read -r up uf us < <(echo "$unit_out" |
		sed -n 's/^unit: \([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p')
	if [ -z "${up:-}" ]; then
		echo "FAIL unit-tests: exit $unit_rc without a summary"
		up=0 uf=1 us=0
	fi
	passed=$((passed + up)) failed=$((failed + uf)) skipped=$((skipped + us))

	# The VMM on this host: bad input, and runs on the host's own /dev/kvm where
	# there is one that works (a counted SKIP without).
	echo "== VMM on the host (bad input; runs on the host's /dev/kvm)"
	run_checks vmm_runs "$here/tests/host/vmm_runs.sh"

	# The same runs and the unit tests under ASan+UBSan (make asan-build).
	echo "== ASan+UBSan build (build/asan)"
	run_checks asan "$here/tests/host/asan.sh"

	echo "== bad environments (host side)"
	run_checks bad_environment "$here/tests/host/bad_environment.sh"

	echo "== hwpoison-guest's refusals, against a fake debugfs (host side)"
	run_checks tool_safety "$here/tests/host/tool_safety.sh"

	echo "== hwpoison-guest --qmp against the distro's QEMU (TCG, host side, fake debugfs)"
	run_checks qmp_tool "$here/tests/host/qmp_tool.sh"

	echo "== hwpoison-guest --watch/--domain through libvirt's embedded driver (TCG, host side, fake debugfs)"
	run_checks libvirt_tool "$here/tests/host/libvirt_tool.sh"

	echo "== hwlab-stamp keeps every line of QEMU's console"
	run_checks hwlab_stamp "$here/tests/host/hwlab_stamp.sh"

	echo "== guest_ms: a guest's own time of an event, on console fixtures"
	run_checks guest_ms "$here/tests/host/guest_ms.sh"

	echo "== no early-stopping pipe reader under pipefail (scripts)"
	run_checks pipefail_lint "$here/tests/host/pipefail_lint.sh"

	echo "== docs/design.md's file map"
	run_checks file_map "$here/tests/host/file_map.sh"

	echo "== vmm/'s layers: no include or call up a layer, no cycle between folders"
	run_checks layering "$here/tests/host/layering.sh"

	echo "== newer Debian suites without touching the host (scripts/debian-suite.sh; network)"
	run_checks debian_suite "$here/tests/host/debian_suite.sh"

	echo "== kernel patches"
	run_checks check-patches "$here/tests/check-patches.sh"

	echo "== hwpoison-inject as a module (kernel flavour module, CONFIG_HWPOISON_INJECT=m; cached; cold about 10 min)"
	run_checks kernel_module "$here/tests/host/kernel_module.sh"
fi

# The splat scanner (make test-debug-kernel's) on sample logs, and before
# it scans the scenarios' logs: a scan that could not fail would pass them all.
splat_check=${HWLAB_SPLAT_CHECK:-0}
if [ "${HWLAB_HOST_CHECKS:-1}" = 1 ] || [ "$splat_check" = 1 ]; then
	echo "== the kernel splat scanner, on sample console logs (host side)"
	run_checks kernel_splats_selftest "$here/tests/host/kernel_splats_selftest.sh"
fi
if [ -n "${HWLAB_KERNEL:-}" ]; then
	echo "== outer kernel: $HWLAB_KERNEL (key $(cat "$(dirname "$HWLAB_KERNEL")/kernel.key" 2>/dev/null ||
		echo unknown)), bounds x$factor"
fi

for s in "${scenarios[@]}"; do
	read -r _ _ _ _ table_limit < <(scenario_row "$s")
	limit=${HWLAB_BOOT_TIMEOUT:-$((table_limit * factor))}
	echo "== scenario $s (outer VM, TCG, up to ${limit}s; log: ${logs#"$here"/}/$s.log)"
	t0=$(date +%s)
	"$here/outer-qemu/boot.sh" "$s" "$logs/$s.log" "$limit"
	rc=$?
	tries=1
	while [ "$rc" -eq 126 ] && [ $tries -lt 3 ]; do
		# The outer VM froze under host QEMU's TCG (boot.sh: silent, and
		# deaf to an NMI): no verdict on our code either way. Keep that
		# log and run the scenario again, from a fresh boot. The known
		# cause, a timer interrupt QEMU 7.2 loses, is made harmless by
		# the outer kernel's periodic tick (boot.sh, docs/design.md);
		# this is the net under anything else of that kind. A third
		# freeze fails the run.
		mv "$logs/$s.log" "$logs/$s.frozen$tries.log"
		mv "$logs/$s.log.hang" "$logs/$s.frozen$tries.log.hang" 2>/dev/null
		echo "RETRY $s: the outer VM froze (log: build/logs/$s.frozen$tries.log); booting it again"
		retried="$retried $s"
		"$here/outer-qemu/boot.sh" "$s" "$logs/$s.log" "$limit"
		rc=$?
		tries=$((tries + 1))
	done
	tally_checks "$logs/$s.log"
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		# a crash, hang or harness error with no failed assertion still fails
		echo "FAIL $s: scenario exited $rc"
		failed=$((failed + 1))
	fi
	if [ $((p + f + k)) -eq 0 ] && [ "$rc" -eq 0 ]; then
		echo "FAIL $s: ran no assertion"
		failed=$((failed + 1))
	fi
	echo "-- $s: $p passed, $f failed, $k skipped, exit $rc, $(( $(date +%s) - t0 ))s"
	if [ "$splat_check" = 1 ]; then
		run_checks "$s.splats" "$here/tests/host/kernel_splats.sh" "$logs/$s.log" "$s"
	fi
done

# the demo's two-level story, from this run's linux_guest log (not an old one)
if [[ " ${scenarios[*]} " == *" linux_guest "* ]]; then
	echo "== make demo's story of the Linux guest (tests/story.py on build/logs/linux_guest.log)"
	run_checks demo_story "$here/tests/host/demo_story.sh"
fi

# the guest matrix's table (its quick form in make test), from this run's log
if [[ " ${scenarios[*]} " == *" guest_matrix "* ]] && [ -f "$logs/guest_matrix.log" ]; then
	echo "== the guest matrix (tests/guest_matrix.py on ${logs#"$here"/}/guest_matrix.log)"
	python3 "$here/tests/guest_matrix.py" "$logs/guest_matrix.log" || true
fi

[ -n "$retried" ] && echo "retried after an outer-VM freeze:$retried"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
