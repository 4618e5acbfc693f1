#!/usr/bin/env bash
# The outer kernel's own error reports in a console log (make
# test-debug-kernel runs this after each scenario): one failed check per
# splat, quoting its first lines, or one passed check when there is none.
#
# Usage: tests/host/kernel_splats.sh LOG NAME
#   LOG   an outer VM's console log (outer-qemu/boot.sh's)
#   NAME  the check names' prefix (the scenario)
#
# A splat starts at a line holding one of SPLAT_PATTERNS (fixed strings):
# lockdep ("WARNING: possible circular locking dependency detected",
# "WARNING: inconsistent lock state", ...), might_sleep() ("BUG: sleeping
# function called from invalid context"), DEBUG_VM (VM_BUG_ON_PAGE's "page
# dumped because: VM_BUG_ON_...", then "kernel BUG at"), WARN(), KASAN and
# any other BUG:. The QUOTE lines from it are quoted, up to the next splat;
# only VM_BUG_ON_*()'s own "kernel BUG at" in them is not another. The
# same report seen again (the same first line, timestamp, CPU and PID
# aside) is counted on its first check, not given another. Not scanned:
# a Linux guest's console, which scenarios echo as "  con: " lines (the
# inner kernel's, judged by the scenario), and the harness's own HWLAB-
# lines.
#
# On a lockdep kernel (its boot banner "Lock dependency validator"), also
# one check that lock checking was still on when the scenario ended
# (outer-qemu/init's HWLAB-LOCKDEP line, debug_locks=1): lockdep turns
# itself off after its first splat or at one of its limits, and checks
# nothing after that.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/tests/lib/check.sh"

SPLAT_PATTERNS=(
	"WARNING: possible circular locking"
	"BUG: sleeping function called from invalid context"
	"inconsistent lock state"
	"VM_BUG_ON"
	"kernel BUG at"
	"BUG:"
	"WARNING:"
	"KASAN"
)
QUOTE=6

[ $# -eq 2 ] || { echo "usage: $0 LOG NAME" >&2; exit 2; }
log=$1 name=$2
if [ ! -f "$log" ]; then
	fail "$name-kernel-splats" "no console log $log"
	finish
fi

# one line per distinct splat: COUNT<TAB>first QUOTE lines joined by " | "
splats=$(awk -v quote="$QUOTE" -v patterns="$(printf '%s\n' "${SPLAT_PATTERNS[@]}")" '
	BEGIN { np = split(patterns, pat, "\n") }
	/^  con: / || /^HWLAB-/ { next }
	{
		sub(/\r$/, "")
		sub(/^\[ *[0-9]+\.[0-9]+\] /, "")
		for (i = 1; i <= np; i++)
			if (pat[i] != "" && index($0, pat[i])) break
		# the dump of a VM_BUG_ON_*() ends in its own BUG(): the same splat
		if (i <= np && !(left > 0 && index(head, "VM_BUG_ON") && index($0, "kernel BUG at"))) {
			left = quote - 1
			head = $0
			key = $0
			gsub(/CPU: [0-9]+ PID: [0-9]+/, "CPU: N PID: N", key)
			gsub(/(pid|PID): [0-9]+/, "pid: N", key)
			if (key in id) {
				count[id[key]]++
				dup = 1
				next
			}
			id[key] = cur = ++n
			count[cur] = 1
			text[cur] = $0
			dup = 0
			next
		}
		if (left > 0) {
			# (blank lines and the separators around splats not quoted)
			if (!dup && $0 !~ /^[[:space:]]*$/ && $0 !~ /^(=+|-+|-+\[ cut here \]-+)$/)
				text[cur] = text[cur] " | " $0
			left--
		}
	}
	END { for (i = 1; i <= n; i++) printf "%d\t%s\n", count[i], text[i] }
' "$log")

if [ -z "$splats" ]; then
	pass "$name-no-kernel-splat" "no lockdep, might_sleep, VM_BUG_ON, BUG:, WARNING: or KASAN report on the outer kernel's console"
else
	i=0
	while IFS=$'\t' read -r n text; do
		i=$((i + 1))
		times=
		[ "$n" -gt 1 ] && times=" (seen $n times)"
		fail "$name-kernel-splat-$i" "$text$times"
	done <<<"$splats"
fi

if grep -aqF 'Lock dependency validator' "$log"; then
	stats=$(sed -n 's/^HWLAB-LOCKDEP //p' "$log" | tail -n 1)
	case " $stats " in
	"  ") fail "$name-lockdep-on" "a lockdep kernel, but no HWLAB-LOCKDEP line: the scenario did not end normally" ;;
	*" debug_locks=1 "*) pass "$name-lockdep-on" "lock checking still on at the end: $stats" ;;
	*) fail "$name-lockdep-on" "lockdep turned itself off (after a splat, or at a limit) and checked nothing after: $stats" ;;
	esac
fi
finish
