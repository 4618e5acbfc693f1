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
prog=stock-kernels
. "$here/suite-files.sh"
for suite in "$@"; do
	mkdir -p "$dir/$suite"
	rc=0
	out=$("$here/debian-suite.sh" kernel "$suite" 2>"$dir/$suite/err") || rc=$?
	if [ $rc -ne 0 ]; then
		suite_unavailable "$suite" $rc kernel vmlinuz version
		continue
	fi
	read -r image pkg ver <<<"$out"
	cp "$image" "$dir/$suite/vmlinuz.new"
	replace "$dir/$suite/vmlinuz"
	echo "$pkg $ver $suite" >"$dir/$suite/version.new"
	replace "$dir/$suite/version"
	suite_available "$suite"
	echo "stock-kernels: $suite: $pkg $ver"
done
