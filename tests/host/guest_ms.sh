#!/usr/bin/env bash
# guest_ms (tests/integration/scenarios/_linux.sh), the time from a write to
# the guest's own printk of what it did, on console fixtures. It reads whole
# records only: the guest's INNER lines are kernel log records with a printk
# time of their own, and a line another one was printed into (the old
# console writer's) is never read for a match.
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

# the guest's own line, a record: its own printk time
cat >"$tmp/inner.con" <<'CON'
[t_ns=199000000000] [   99.000000] before the write
[t_ns=200500000000] [  100.450000] INNER-SIGBUS tag=target pid=46 code=BUS_MCEERR_AR addr=0x7f0000002000 lsb=12 idx=2
CON
got=$(guest_ms "$tmp/inner.con" 200000000000 'INNER-SIGBUS tag=target pid=46 ' 0)
check guest-ms-record "the guest's INNER line, a record: 500 ms (got $got)" test "$got" = 500

# a cut line (a kernel message printed into a line written to the console
# directly) is not a record: not read, neither for the match nor the offset
cat >"$tmp/midline.con" <<'CON'
[t_ns=199000000000] [   99.000000] before the write
[t_ns=200300000000] INNER-SIGBUS tag=target[  100.250000] Memory failure: 0x1234: recovery action for dirty LRU page: Recovered
[t_ns=200500000000] [  100.450000] the next printk line
CON
got=$(guest_ms "$tmp/midline.con" 200000000000 'Memory failure: 0x1234: recovery action' 0)
check guest-ms-midline "a match inside another line is none: '-' (got $got)" \
	test "$got" = -

# nothing after the write: no offset, no figure
cat >"$tmp/none.con" <<'CON'
[t_ns=199000000000] [   99.000000] before the write
CON
got=$(guest_ms "$tmp/none.con" 200000000000 'Memory failure: 0x1234: recovery action' 0)
check guest-ms-none "no match: '-' (got $got)" test "$got" = -
finish
