#!/usr/bin/env bash
# Every patch in kernel/series is a proper git format-patch mail (From,
# Subject, a changelog, Signed-off-by by its author) and checkpatch.pl
# --strict clean, using checkpatch from the kernel tree the build unpacked.
# Reports through tests/lib/check.sh like the scenarios; exits with the
# number of failed checks.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/tests/lib/check.sh"
tree=$(cat "$here/build/kernel.tree" 2>/dev/null)
checkpatch=$tree/scripts/checkpatch.pl

if [ ! -x "$checkpatch" ]; then
	fail checkpatch "no $checkpatch: run 'make kernel' first"
	finish
fi
# the loop reads from a process substitution, not a pipe, so that it runs in
# this shell and its failures reach finish
while read -r p; do
	f=$here/kernel/patches/$p
	name=${p%%.patch}
	name=${name:0:24}
	from=$(awk '/^From: / { sub(/^From: /, ""); print; exit }' "$f")
	if [ -n "$from" ] && grep -q '^Subject: \[PATCH' "$f" &&
		grep -qF "Signed-off-by: $from" "$f"; then
		pass "mail-$name" "From, Subject and Signed-off-by by the author"
	else
		fail "mail-$name" "missing From/Subject or Signed-off-by by '$from'"
	fi
	body=$(awk '/^Subject:/ { s = 1; next } s && /^Signed-off-by:/ { exit } s' "$f" | grep -c '[a-z]')
	if [ "$body" -ge 3 ]; then
		pass "changelog-$name" "$body lines of changelog"
	else
		fail "changelog-$name" "changelog too short ($body lines)"
	fi
	if out=$(cd "$tree" && "$checkpatch" --strict --no-tree -q "$f" 2>&1) && [ -z "$out" ]; then
		pass "checkpatch-$name" "checkpatch.pl --strict clean"
	else
		fail "checkpatch-$name" "checkpatch.pl --strict: $(echo "$out" | sed -n '1,3p' | tr '\n' ' ')"
	fi
done < <(grep -v '^[[:space:]]*\(#\|$\)' "$here/kernel/series")

# The cover letter (git format-patch --cover-letter; not in the series: git
# am has nothing to apply from it): [PATCH 0/N] for the N patches, a real
# subject and blurb, and the shortlog naming each patch's subject.
cover=$here/kernel/patches/0000-cover-letter.patch
n=$(grep -cv '^[[:space:]]*\(#\|$\)' "$here/kernel/series")
if [ ! -f "$cover" ]; then
	fail cover-letter "no kernel/patches/0000-cover-letter.patch"
else
	check cover-letter-subject "Subject: [PATCH 0/$n] with a subject of its own" \
		sh -c "grep -q '^Subject: \[PATCH 0/$n\] [^*]' '$cover' && ! grep -q '\*\*\*' '$cover'"
	missing=
	while read -r p; do
		# the subject as the shortlog starts it (it wraps long ones)
		subj=$(sed -n '/^Subject:/{N;s/\n//;s/^Subject: \[PATCH [0-9]*\/[0-9]*\] //;p}' \
			"$here/kernel/patches/$p" | cut -c1-40)
		grep -qF "  $subj" "$cover" || missing="$missing $p"
	done < <(grep -v '^[[:space:]]*\(#\|$\)' "$here/kernel/series")
	check cover-letter-shortlog "the shortlog names every patch${missing:+ (missing:$missing)}" \
		test -z "$missing"
	blurb=$(awk '/^Subject:/ { s = 1; next } s && /\([0-9]+\):$/ { exit } s' "$cover" | grep -c '[a-z]')
	check cover-letter-blurb "$blurb lines on what the series is for and how it was tested" \
		test "$blurb" -ge 10
fi
finish
