#!/usr/bin/env bash
# docs/design.md's file map ("Where the code is") matches the tree: every C
# file of vmm/, lib/ and tools/ and every header of include/ has a row, and
# every path a row names exists. A new file without a stated job, or a row
# for a file that moved, fails here instead of leaving the map to rot.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/tests/lib/check.sh"
doc=$here/docs/design.md

# the map: the table rows between its heading and the next heading
map=$(awk '/^## Where the code is/ { on = 1; next } /^## / { on = 0 } on && /^\| `/' "$doc")
if [ -z "$map" ]; then
	fail file-map "no '## Where the code is' table in docs/design.md"
	finish
fi
# first-column paths, each cell may name several: `a`, `b`
paths=$(printf '%s\n' "$map" | awk -F'|' '{ print $2 }' | grep -o '`[^`]*`' | tr -d '`')

missing=
for f in $(cd "$here" && git ls-files 'vmm/*.c' 'lib/*.c' 'tools/*.c' 'include/*.h' 2>/dev/null ||
	   ls vmm/*.c vmm/*/*.c lib/*.c tools/*.c include/*.h); do
	dir=${f%/*}/
	# a here-string: "printf | grep -q" under pipefail fails when grep
	# stops reading before printf has written all
	grep -qxF -e "$f" -e "$dir" <<<"$paths" || missing="$missing $f"
done
check file-map-covers "every vmm/, lib/, tools/ C file and include/ header has a row${missing:+ (missing:$missing)}" \
	test -z "$missing"

stale=
for p in $paths; do
	[ -e "$here/$p" ] || stale="$stale $p"
done
check file-map-exists "every path in the map exists${stale:+ (not in the tree:$stale)}" test -z "$stale"
finish
