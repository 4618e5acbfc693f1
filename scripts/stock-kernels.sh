#!/usr/bin/env bash
# The newest stock kernel of each Debian suite, as users run it as a guest:
# DIR/SUITE/vmlinuz and DIR/SUITE/version ("PACKAGE VERSION SUITE"), from
# scripts/debian-suite.sh (cached outside the clone, keyed by version). A
# suite whose kernel cannot be had gets DIR/SUITE/unavailable with the
# reason instead, and the checks that need it skip with that reason. Files
# are replaced only when they change, so that make rebuilds nothing when
# no suite moved.
#
# Usage: scripts/stock-kernels.sh DIR [SUITE...]   (default: bookworm trixie sid)
# DIR/.changed: touched whenever a file here changed
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:?usage: $0 DIR [SUITE...]}
shift
[ $# -gt 0 ] || set -- bookworm trixie sid
# replace FILE: FILE.new over FILE when they differ; DIR/.changed is
# touched then (make's prerequisite for the image)
replace() {
	if cmp -s "$1.new" "$1"; then
		rm -f "$1.new"
	else
		mv "$1.new" "$1"
		touch "$dir/.changed"
	fi
}
[ -e "$dir/.changed" ] || { mkdir -p "$dir"; touch "$dir/.changed"; }
for suite in "$@"; do
	mkdir -p "$dir/$suite"
	rc=0
	out=$("$here/debian-suite.sh" kernel "$suite" 2>"$dir/$suite/err") || rc=$?
	if [ $rc -ne 0 ]; then
		reason=$(grep 'debian-suite: error' "$dir/$suite/err" | tail -n 1)
		[ -n "$reason" ] || reason="debian-suite.sh kernel $suite failed with status $rc"
		echo "stock-kernels: $suite: $reason" >&2
		[ $rc -eq 3 ] || { cat "$dir/$suite/err" >&2; exit 1; }
		echo "$reason" >"$dir/$suite/unavailable.new"
		replace "$dir/$suite/unavailable"
		[ -e "$dir/$suite/vmlinuz" ] && touch "$dir/.changed"
		rm -f "$dir/$suite/vmlinuz" "$dir/$suite/version"
		continue
	fi
	read -r image pkg ver <<<"$out"
	cp "$image" "$dir/$suite/vmlinuz.new"
	replace "$dir/$suite/vmlinuz"
	echo "$pkg $ver $suite" >"$dir/$suite/version.new"
	replace "$dir/$suite/version"
	[ -e "$dir/$suite/unavailable" ] && touch "$dir/.changed"
	rm -f "$dir/$suite/unavailable" "$dir/$suite/err"
	echo "stock-kernels: $suite: $pkg $ver"
done
