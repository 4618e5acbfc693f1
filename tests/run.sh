#!/usr/bin/env bash
# The project's test command (make test): host unit tests, then every
# integration scenario booted in its own outer VM. Each assertion counts;
# the last line is "N passed, N failed".
#
# Usage: tests/run.sh [SCENARIO...]   (default: all in tests/integration/scenarios)
# Env:   HWLAB_BOOT_TIMEOUT  seconds per outer-VM boot (default 600)
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
logs=$here/build/logs
limit=${HWLAB_BOOT_TIMEOUT:-600}
passed=0 failed=0
mkdir -p "$logs"

echo "== host unit tests"
unit_out=$("$here/build/unit-tests")
unit_rc=$?
echo "$unit_out"
read -r up uf < <(echo "$unit_out" | sed -n 's/^unit: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p')
if [ -z "${up:-}" ]; then
	echo "FAIL unit-tests: exit $unit_rc without a summary"
	up=0 uf=1
fi
passed=$((passed + up)) failed=$((failed + uf))

# The host's own /dev/kvm, where there is one that works, runs the guest too
# (no poisoning here: the host kernel is not ours to poison).
echo "== VMM on the host's /dev/kvm"
if "$here/build/hwlab-vmm" --check >/dev/null 2>&1; then
	if "$here/build/hwlab-vmm" --vcpus 2 --passes 2 "$here/build/guest.elf" >"$logs/host-vmm.log" 2>&1 &&
		[ "$(grep -c '"event":"guest_done".*"checksum_ok":true' "$logs/host-vmm.log")" -eq 2 ]; then
		echo "PASS host-vmm: 2 vCPUs ran the guest to completion on the host's KVM"
		passed=$((passed + 1))
	else
		echo "FAIL host-vmm: see build/logs/host-vmm.log"
		tail -n 5 "$logs/host-vmm.log"
		failed=$((failed + 1))
	fi
else
	echo "skipped: no usable /dev/kvm on this host ($("$here/build/hwlab-vmm" --check 2>&1 | tail -n 1))"
fi

# run_checks COMMAND: show its HWLAB-CHECK lines and add them to the totals
run_checks() {
	local out
	out=$("$@")
	echo "$out" | grep '^HWLAB-CHECK ' | sed 's/^HWLAB-CHECK //'
	passed=$((passed + $(echo "$out" | grep -c '^HWLAB-CHECK PASS')))
	failed=$((failed + $(echo "$out" | grep -c '^HWLAB-CHECK FAIL')))
}

echo "== bad environments (host side)"
run_checks "$here/tests/host/bad_environment.sh"

echo "== kernel patches"
run_checks "$here/tests/check-patches.sh"

if [ $# -gt 0 ]; then
	scenarios=("$@")
else
	scenarios=()
	for f in "$here"/tests/integration/scenarios/[!_]*.sh; do
		scenarios+=("$(basename "$f" .sh)")
	done
fi

for s in "${scenarios[@]}"; do
	echo "== scenario $s (outer VM, TCG; log: build/logs/$s.log)"
	t0=$(date +%s)
	"$here/outer-qemu/boot.sh" "$s" "$logs/$s.log" "$limit"
	rc=$?
	grep -a '^HWLAB-CHECK ' "$logs/$s.log" | sed 's/^HWLAB-CHECK //'
	p=$(grep -ac '^HWLAB-CHECK PASS ' "$logs/$s.log")
	f=$(grep -ac '^HWLAB-CHECK FAIL ' "$logs/$s.log")
	passed=$((passed + p)) failed=$((failed + f))
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		# a crash, hang or harness error with no failed assertion still fails
		echo "FAIL $s: scenario exited $rc"
		failed=$((failed + 1))
	fi
	if [ "$p" -eq 0 ] && [ "$f" -eq 0 ] && [ "$rc" -eq 0 ]; then
		echo "FAIL $s: ran no assertion"
		failed=$((failed + 1))
	fi
	echo "-- $s: $p passed, $f failed, exit $rc, $(( $(date +%s) - t0 ))s"
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
