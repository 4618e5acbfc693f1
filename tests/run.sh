#!/usr/bin/env bash
# The project's test command (make test): the rows of
# tests/integration/scenarios.table in group default, in its order: host
# unit tests and host-side checks, then every integration scenario booted
# in its own outer VM, then the host checks that read their logs (the
# table's header: where and groups). Each assertion counts as
# passed, failed or skipped (a check that cannot run on this host or VM);
# the last line is "N passed, N failed, N skipped", which CI parses.
#
# Usage: tests/run.sh [SCENARIO...]   (default: the outer rows in group
#                                      default, in the table's order)
# Env:   HWLAB_BOOT_TIMEOUT  seconds per outer-VM boot, for every scenario
#                            (default: the scenario's timeout in the table)
#        HWLAB_CPU_HOG       run N busy loops beside the whole suite (make
#                            test-loaded: one per core), so that a test that
#                            waits for time instead of for state shows up
#        HWLAB_HOST          the host (outer) kernel: 6.1 (ours, default),
#                            6.12, 7.2 (ours) or bookworm, trixie, sid
#                            (Debian's stock; make host-kernel HOST=...;
#                            outer-qemu/boot.sh)
#        HWLAB_KERNEL        the outer kernel (outer-qemu/boot.sh; default
#                            build/bzImage)
#        HWLAB_TIME_FACTOR   a slower kernel's factor on every bound: the
#                            table's boot timeouts and the waits in the VM
#                            (outer-qemu/boot.sh; default 1)
#        HWLAB_LOGS          where the logs go (default build/logs)
#        HWLAB_HOST_CHECKS=0 the scenarios alone: no host rows of group
#                            default (unit tests, host-side checks)
#        HWLAB_SPLAT_CHECK=1 after each scenario, one check per lockdep,
#                            might_sleep, VM_BUG_ON, BUG:, WARNING: or KASAN
#                            report of the outer kernel in its log
#                            (tests/host/kernel_splats.sh), and before the
#                            scenarios the host rows of group splat
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
table_all=$(table_rows) || die "malformed $scenario_table (see above)"
if ! mismatches=$(scenario_table_mismatches); then
	echo "$mismatches" | sed 's/^/run.sh: error: /' >&2
	die "tests/integration/scenarios.table and the scripts (tests/host/, tests/integration/scenarios/) must agree"
fi
if [ $# -gt 0 ]; then
	scenarios=("$@")
	for s in "${scenarios[@]}"; do
		scenario_row "$s" >/dev/null ||
			die "unknown scenario '$s' (not in tests/integration/scenarios.table)"
	done
else
	# make test: the scenarios in group default (measure alone is nodefault)
	mapfile -t scenarios < <(awk '$2 == "outer" && $3 ~ /(^|,)default(,|$)/ { print $1 }' <<<"$table_all")
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

# run_unit: build/unit-tests, shown whole; its summary line is what counts
# (a skipped unit test, UNIT_SKIP: no usable /dev/kvm, say, is a skipped check)
run_unit() {
	local unit_out unit_rc up uf us
	unit_out=$("$here/build/unit-tests")
	unit_rc=$?
	echo "$unit_out"
	read -r up uf us < <(echo "$unit_out" |
		sed -n 's/^unit: \([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p')
	if [ -z "${up:-}" ]; then
		echo "FAIL unit-tests: exit $unit_rc without a summary"
		up=0 uf=1 us=0
	fi
	passed=$((passed + up)) failed=$((failed + uf)) skipped=$((skipped + us))
}

# run_host_rows ROWS: run each host row of ROWS (table_rows' lines) that
# has a group this run selects, under its description as the header
run_host_rows() {
	local rows row name groups desc g
	# an array, not a loop reading stdin: a checker must not eat the rows
	mapfile -t rows <<<"$1"
	for row in "${rows[@]}"; do
		read -r name _ groups _ _ _ _ _ desc <<<"$row"
		[ -n "$name" ] || continue
		for g in ${groups//,/ }; do
			[[ " $selected_groups " == *" $g "* ]] || continue
			echo "== $desc"
			if [ "$name" = unit ]; then
				run_unit
			else
				run_checks "$name" "$host_check_dir/$name.sh"
			fi
			break
		done
	done
}

# The groups this run selects (scenarios.table's header): default, make
# test's host checks (HWLAB_HOST_CHECKS=0, make test-debug-kernel: the
# scenarios alone); splat, the splat scanner's own check, run before it
# scans the scenarios' logs (a scan that could not fail would pass them
# all); and the name of each scenario this run boots, for the host rows
# that read its log.
splat_check=${HWLAB_SPLAT_CHECK:-0}
selected_groups="${scenarios[*]}"
[ "${HWLAB_HOST_CHECKS:-1}" = 1 ] && selected_groups+=" default"
[ "$splat_check" = 1 ] && selected_groups+=" splat"
# host rows above the first outer row run before the scenarios, the rest after
host_before=$(awk '$2 == "outer" { exit } $2 == "host"' <<<"$table_all")
host_after=$(awk '$2 == "outer" { outer = 1; next } outer && $2 == "host"' <<<"$table_all")
run_host_rows "$host_before"

if [ -n "${HWLAB_HOST:-}" ]; then
	echo "== host kernel: $HWLAB_HOST ($(cat "$here/build/hosts/$HWLAB_HOST/version" 2>/dev/null ||
		echo "not built: make host-kernel HOST=$HWLAB_HOST"))"
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

# the host rows after the scenarios (make demo's story, from this run's
# linux_guest log, not an old one)
run_host_rows "$host_after"

# the guest matrix's table (its quick form in make test), from this run's log
if [[ " ${scenarios[*]} " == *" guest_matrix "* ]] && [ -f "$logs/guest_matrix.log" ]; then
	echo "== the guest matrix (tests/guest_matrix.py on ${logs#"$here"/}/guest_matrix.log)"
	python3 "$here/tests/guest_matrix.py" "$logs/guest_matrix.log" || true
fi

[ -n "$retried" ] && echo "retried after an outer-VM freeze:$retried"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
