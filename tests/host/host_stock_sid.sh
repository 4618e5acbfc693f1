#!/usr/bin/env bash
# The newest host users run, in make test: Debian sid's stock kernel (7.2)
# as the outer kernel, as it ships, with the modules it must load
# (scripts/host-kernel.sh sid), and one late kill of the bare-metal guest in
# hwlab-vmm on it (the host matrix's cell sid/late_kill, tests/matrix/
# cell.py): that today's host still boots, loads KVM and the injector, and
# that a poisoned guest page is still an AR the guest recovers from. The
# whole host matrix (six hosts, every case) is make host-matrix.
# Each check of the cell's scenario is reported here as sid-NAME.
# Reports through tests/lib/check.sh; exits with the number of failed checks.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/tests/lib/check.sh"
out=$here/build/cells-test
rc=0
"$here/scripts/host-kernel.sh" sid "$here/build/hosts/sid" >"$out.host.log" 2>&1 || rc=$?
if [ $rc -eq 3 ]; then
	skip sid-host "Debian sid's stock kernel cannot be had: $(grep 'error' "$out.host.log" | tail -n 1)"
	finish
fi
check sid-host "scripts/host-kernel.sh sid: $(tail -n 1 "$out.host.log")" test $rc -eq 0
[ $rc -eq 0 ] || finish
rm -rf "$out"
"$here/tests/matrix/cell.py" sid late_kill --out "$out" | sed 's/^/  /'
json=$out/sid/late_kill.json
check sid-cell-result "the cell wrote its result file ($json)" test -s "$json"
# the scenario's own checks, named for this host
grep -a '^HWLAB-CHECK ' "$out/sid/late_kill.log" | sed 's/^HWLAB-CHECK \([A-Z]*\) /HWLAB-CHECK \1 sid-/'
failed_in=$(grep -ac '^HWLAB-CHECK FAIL ' "$out/sid/late_kill.log")
hwlab_failures=$((hwlab_failures + failed_in))
finish
