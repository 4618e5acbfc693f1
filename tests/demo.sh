#!/usr/bin/env bash
# make demo: boot the outer VM three times: the bare-metal guest with early
# kill and with late kill, then the Linux guest (linux_guest: late kill,
# early kill, two vCPUs), and tell what happened from the outer kernel, the
# VMM and the guest; for the Linux guest two levels deep, down to its own
# kernel's memory_failure() and the inner process's SIGBUS.
# A burst told page by page (early_kill's 40 pages) folds into one line
# per kind of line with a count, so each story fits a screen.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
logs=$here/build/logs
rc=0
for s in early_kill late_kill linux_guest; do
	echo "booting the outer VM for scenario $s ..."
	# the boot timeout is the scenario's in tests/integration/scenarios.table
	# unless HWLAB_BOOT_TIMEOUT says otherwise
	"$here/outer-qemu/boot.sh" "$s" "$logs/$s.log" "${HWLAB_BOOT_TIMEOUT:-}" || rc=1
done
python3 "$here/tests/story.py" "$logs/early_kill.log" "$logs/late_kill.log" \
	"$logs/linux_guest.log" || rc=1
exit $rc
