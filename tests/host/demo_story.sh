#!/usr/bin/env bash
# make demo's story of the Linux guest (tests/story.py), told from the
# linux_guest scenario's log of this run: each run reads outer kernel → VMM
# → inner kernel → inner process in time order, and the summary table says
# which runs the guest survived. Without that log (a run of other
# scenarios only) the checks are skipped, not passed.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/tests/lib/check.sh"
log=$here/build/logs/linux_guest.log

if [ ! -s "$log" ]; then
	skip demo-story "no build/logs/linux_guest.log: run the linux_guest scenario first"
	finish
fi
out=$(python3 "$here/tests/story.py" "$log")
rc=$?
printf '%s\n' "$out" | sed 's/^/  story: /'
check demo-story-exit "story.py reads the log and every check in it passed (exit $rc)" test "$rc" -eq 0

# line number of the first story line of run N matching a pattern
first_in_run() {
	printf '%s\n' "$out" | awk -v run="=== linux_guest, run $1:" -v pat="$2" '
		index($0, run) == 1 { on = 1; next } /^=== / { on = 0 }
		on && $0 ~ pat { print NR; exit }'
}
for run in 1 2; do
	w=$(first_in_run $run 'outer \| Injecting memory failure')
	s=$(first_in_run $run 'vmm   \| SIGBUS BUS_MCEERR_A[RO] .*inject')
	r=$(first_in_run $run 'inner \| Memory failure: .*Recovered')
	g=$(first_in_run $run 'inner \| INNER-SIGBUS')
	check demo-story-order-$run "run $run in time order: outer write ($w) < VMM inject ($s) < inner recovery ($r) < inner SIGBUS ($g)" \
		test -n "$w" -a -n "$s" -a -n "$r" -a -n "$g" -a "${w:-0}" -lt "${s:-0}" -a "${s:-0}" -lt "${r:-0}" -a "${r:-0}" -lt "${g:-0}"
done
check demo-story-late "the summary: run 1 is late kill (AR in, AR to the inner process), the guest lives" \
	sh -c "printf '%s\n' \"\$1\" | grep -qE '^linux_guest#1 +AR +1 +1 +AR +yes +no +stopped'" _ "$out"
check demo-story-early "the summary: run 2 is early kill (AO in, AO to the inner process), the guest lives" \
	sh -c "printf '%s\n' \"\$1\" | grep -qE '^linux_guest#2 +AO +1 +1 +AO +yes +no +stopped'" _ "$out"
check demo-story-smp "the summary: run 3, two ARs on two vCPUs, both recovered, the guest lives" \
	sh -c "printf '%s\n' \"\$1\" | grep -qE '^linux_guest#3 +AR +2 +2 +AR +yes +no +stopped'" _ "$out"
finish
