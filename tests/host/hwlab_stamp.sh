#!/usr/bin/env bash
# hwlab-stamp (tools/hwlab-stamp.c), which times QEMU's serial console as
# hwlab-vmm's --console-stamp times its own: every line keeps all its text,
# a bare CR inside it included. QEMU's SeaBIOS ends "Probing EDD ... ok" in
# a bare CR; the guest's next line ran into it and was dropped whole, and
# the guest matrix took a QEMU that had booted for one that had stalled.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/tests/lib/check.sh"
stamp=$here/build/hwlab-stamp

out=$(printf 'SeaBIOS\r\nProbing EDD (edd=off to disable)... ok\rINNER-BOOT kernel=6.12 cpus=1\r\nnext\n' |
	"$stamp")
check stamp-cr-line "a line after a bare CR survives: $(printf '%s' "$out" | tr '\n' '|')" \
	grep -q '^\[t_ns=[0-9]*\] Probing EDD (edd=off to disable)... okINNER-BOOT kernel=6.12 cpus=1$' \
	<<<"$out"
check stamp-lines "one stamped line per newline, no CR left" \
	test "$(grep -c '^\[t_ns=[0-9]*\] ' <<<"$out")" -eq 3 -a "$(tr -cd '\r' <<<"$out" | wc -c)" -eq 0
finish
