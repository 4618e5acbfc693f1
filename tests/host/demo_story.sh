#!/usr/bin/env bash
# make demo's story of the Linux guest (tests/story.py), told from the
# linux_guest scenario's log of this run: each run reads outer kernel → VMM
# → inner kernel → inner process in time order, and the summary table says
# which runs the guest survived. Without that log (a run of other
# scenarios only) those checks are skipped, not passed.
# First, on tiny committed logs (tests/fixtures/story/), the folding that
# keeps each story on a screen: a page-by-page burst reads as one line with
# its count, and a line that differs in more than its numbers stays alone.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/tests/lib/check.sh"
log=$here/build/logs/linux_guest.log
fixtures=$here/tests/fixtures/story
# a story longer than this does not fit a screen
screen_lines=60

expect demo-story-unit 0 "OK" python3 "$here/tests/story_test.py"

# grep -c's count of a fixed string in a story (0 when absent)
count_in() { printf '%s\n' "$1" | grep -cF -- "$2"; }
burst=$(python3 "$here/tests/story.py" "$fixtures/burst.log")
printf '%s\n' "$burst" | sed 's/^/  burst: /'
check demo-story-fold-count "8 pages' recovery lines fold into one line that says x8 and the pfn range" \
	test "$(count_in "$burst" "kernel | Memory failure: 0x3fb00..0x3fb07: recovery action for dirty LRU page: Recovered  ×8 in 7.0 ms")" -eq 1 \
	-a "$(count_in "$burst" "Memory failure: ")" -eq 1
check demo-story-fold-cycle "the pages' two kernel lines in turn and the VMM's 7 hooks fold each into one" \
	test "$(count_in "$burst" "kernel | Injecting memory failure for pfn 0x3fb00..0x3fb07 at process virtual address 0x7f0000000000..0x7f0000007000  ×8")" -eq 1 \
	-a "$(count_in "$burst" "VMM test hook poisons GPA 0x601000..0x607000 (hva 0x7f0000001000..0x7f0000007000) with madvise  ×7")" -eq 1
mixed=$(python3 "$here/tests/story.py" "$fixtures/mixed.log")
printf '%s\n' "$mixed" | sed 's/^/  mixed: /'
# the kernel's results in story order, each with its count when folded
results=$(printf '%s\n' "$mixed" | grep -F 'recovery action' | sed 's/.*page: //; s/ in [0-9.]* ms$//' | paste -sd'|')
check demo-story-fold-failed "a Failed page among Recovered ones stays on its own line: $results" \
	test "$results" = "Recovered  ×3|Failed|Recovered  ×2|Recovered|Recovered"
check demo-story-fold-process "a page whose SIGBUS went to another process stays on its own line" \
	test "$(count_in "$mixed" "Sending SIGBUS to hwlab-vmm:51 due to hardware memory corruption")" -eq 1 \
	-a "$(count_in "$mixed" "0x3fb06: Sending SIGBUS to hwlab-vmm:51")" -eq 1

# each story make demo tells, from the log of the scenario that tells it
for s in early_kill late_kill linux_guest; do
	if [ ! -s "$here/build/logs/$s.log" ]; then
		skip demo-story-screen-$s "no build/logs/$s.log: run the $s scenario first"
		continue
	fi
	# longest story: from a "=== " header to the blank line that ends it
	longest=$(python3 "$here/tests/story.py" "$here/build/logs/$s.log" | awk '
		/^=== / { on = 1; n = 0 } on && /^$/ { on = 0 } on { if (++n > max) max = n }
		END { print max + 0 }')
	check demo-story-screen-$s "each story of $s fits a screen: longest $longest lines, at most $screen_lines" \
		test "$longest" -gt 0 -a "$longest" -le "$screen_lines"
done

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
