#!/usr/bin/env bash
# make demo: boot the outer VM twice, once with early kill and once with
# late kill, and tell what happened from the kernel, the VMM and the guest.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
logs=$here/build/logs
rc=0
for s in early_kill late_kill; do
	echo "booting the outer VM for scenario $s ..."
	# the boot timeout is the scenario's in tests/integration/scenarios.table
	# unless HWLAB_BOOT_TIMEOUT says otherwise
	"$here/outer-qemu/boot.sh" "$s" "$logs/$s.log" "${HWLAB_BOOT_TIMEOUT:-}" || rc=1
done
python3 "$here/tests/story.py" "$logs/early_kill.log" "$logs/late_kill.log" || rc=1
exit $rc
