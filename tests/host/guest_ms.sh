#!/usr/bin/env bash
# guest_ms (tests/integration/scenarios/_linux.sh), the time from a write to
# the guest's own printk of what it did, on console fixtures. Its clock
# offset comes from printk lines arriving from the write to the match; when
# the match came inside a userspace line and no clean printk line came
# before it (sid's tuned early kill, 2026-12-06), the offset comes from the
# next printk line instead of the cell reading "-".
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/tests/lib/check.sh"
lib=$here/tests/integration/scenarios/_linux.sh

# the function alone: _linux.sh is for the outer VM (_lib.sh sources it and
# /hwlab/lib/check.sh)
eval "$(awk '/^guest_ms\(\) \{/ { on = 1 } on { print } on && /^\}/ { exit }' "$lib")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# guest clock = outer clock - 100 s, each line arriving 50 ms after its
# printk (offset 100.05 s); the write at 200.000 s
cat >"$tmp/clean.con" <<'CON'
[t_ns=199000000000] [   99.000000] before the write
[t_ns=200100000000] [  100.050000] a line after the write
[t_ns=200300000000] [  100.250000] Memory failure: 0x1234: recovery action for dirty LRU page: Recovered
CON
got=$(guest_ms "$tmp/clean.con" 200000000000 'Memory failure: 0x1234: recovery action' 0)
check guest-ms-clean "a printk line between the write and the match: 300 ms (got $got)" test "$got" = 300

# the match inside a userspace line, no printk line before it after T0
cat >"$tmp/midline.con" <<'CON'
[t_ns=199000000000] [   99.000000] before the write
[t_ns=200300000000] INNER-SIGBUS tag=target[  100.250000] Memory failure: 0x1234: recovery action for dirty LRU page: Recovered
[t_ns=200500000000] [  100.450000] the next printk line
CON
got=$(guest_ms "$tmp/midline.con" 200000000000 'Memory failure: 0x1234: recovery action' 0)
check guest-ms-midline "the match inside another line: the next printk line's offset, 300 ms (got $got)" \
	test "$got" = 300

# nothing after the write: no offset, no figure
cat >"$tmp/none.con" <<'CON'
[t_ns=199000000000] [   99.000000] before the write
CON
got=$(guest_ms "$tmp/none.con" 200000000000 'Memory failure: 0x1234: recovery action' 0)
check guest-ms-none "no match: '-' (got $got)" test "$got" = -
finish
