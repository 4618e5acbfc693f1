#!/usr/bin/env bash
# Every patch in kernel/series is a proper git format-patch mail (From,
# Subject, a changelog, Signed-off-by by its author) and checkpatch.pl
# --strict clean, using checkpatch from the kernel tree the build unpacked.
# Prints "HWLAB-CHECK PASS|FAIL name: detail" lines like the scenarios.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
tree=$(cat "$here/build/kernel.tree" 2>/dev/null)
checkpatch=$tree/scripts/checkpatch.pl
say() { echo "HWLAB-CHECK $1 $2: $3"; }

if [ ! -x "$checkpatch" ]; then
	say FAIL checkpatch "no $checkpatch: run 'make kernel' first"
	exit 1
fi
grep -v '^[[:space:]]*\(#\|$\)' "$here/kernel/series" | while read -r p; do
	f=$here/kernel/patches/$p
	name=${p%%.patch}
	name=${name:0:24}
	from=$(sed -n 's/^From: \(.*\)$/\1/p' "$f" | head -n 1)
	if [ -n "$from" ] && grep -q '^Subject: \[PATCH' "$f" &&
		grep -qF "Signed-off-by: $from" "$f"; then
		say PASS "mail-$name" "From, Subject and Signed-off-by by the author"
	else
		say FAIL "mail-$name" "missing From/Subject or Signed-off-by by '$from'"
	fi
	body=$(awk '/^Subject:/ { s = 1; next } s && /^Signed-off-by:/ { exit } s' "$f" | grep -c '[a-z]')
	if [ "$body" -ge 3 ]; then
		say PASS "changelog-$name" "$body lines of changelog"
	else
		say FAIL "changelog-$name" "changelog too short ($body lines)"
	fi
	if out=$(cd "$tree" && "$checkpatch" --strict --no-tree -q "$f" 2>&1) && [ -z "$out" ]; then
		say PASS "checkpatch-$name" "checkpatch.pl --strict clean"
	else
		say FAIL "checkpatch-$name" "checkpatch.pl --strict: $(echo "$out" | head -n 3 | tr '\n' ' ')"
	fi
done
