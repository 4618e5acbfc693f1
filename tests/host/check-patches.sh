#!/usr/bin/env bash
# Every patch in kernel/series is a proper git format-patch mail (From,
# Subject, a changelog, Signed-off-by by its author) and checkpatch.pl
# --strict clean, using checkpatch from the kernel tree the build unpacked.
# Reports through tests/lib/check.sh like the scenarios; exits with the
# number of failed checks.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
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
	# A backport says so ("commit <id> upstream.", as the stable trees do),
	# keeps its author, and notes what changed (a "[ ... ]" line naming 6.1);
	# our own patches say what they extend of the 2009 HWPOISON series and
	# carry their version history below the "---".
	upstream=$(grep -m1 -oE '^commit [0-9a-f]{40} upstream\.$' "$f")
	if [ -n "$upstream" ]; then
		check "backport-$name" "${upstream% upstream.}: a Signed-off-by besides the author's, and a backport note" \
			sh -c "[ \$(grep -c '^Signed-off-by: ' '$f') -ge 2 ] && grep -q '^\[.*6\.1' '$f'"
	else
		check "seed-link-$name" "names the 2009 HWPOISON mechanism it extends" grep -q '2009' "$f"
		check "history-$name" "version history (vN:) below the ---" \
			sh -c "awk '/^---\$/ { s = 1; next } s && /^diff --git/ { exit } s' '$f' | grep -qE '^ *v[0-9]+:'"
	fi
	# KVM's hwpoison lsb is x86's business: the generic API and the other
	# architectures stay as they are (v2 changed __gfn_to_pfn_memslot())
	case $p in *KVM-x86-mmu-Report-the-hugetlb-page-size*)
		outside=$(sed -n 's|^diff --git a/\([^ ]*\) .*|\1|p' "$f" | grep -v '^arch/x86/kvm/' | tr '\n' ' ')
		check "x86-only-$name" "touches only arch/x86/kvm/${outside:+ (also: $outside)}" test -z "$outside" ;;
	esac
	# a backport's "commit <id> upstream." names a commit of upstream's
	# history, which the build tree (a source package) does not have
	ignore=()
	[ -n "$upstream" ] && ignore=(--ignore UNKNOWN_COMMIT_ID)
	if out=$(cd "$tree" && "$checkpatch" --strict --no-tree -q "${ignore[@]}" "$f" 2>&1) && [ -z "$out" ]; then
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
	# git format-patch pads the number to the width of the count: 00/10
	check cover-letter-subject "Subject: [PATCH 0/$n] (or 00/$n) with a subject of its own" \
		sh -c "grep -q '^Subject: \[PATCH 0*0/$n\] [^*]' '$cover' && ! grep -q '\*\*\*' '$cover'"
	missing=
	while read -r p; do
		# the subject as the shortlog starts it (it wraps long ones)
		subj=$(sed -n '/^Subject:/{N;s/\n//;s/^Subject: \[PATCH [0-9]*\/[0-9]*\] //;p}' \
			"$here/kernel/patches/$p" | cut -c1-40)
		grep -qF "  $subj" "$cover" || missing="$missing $p"
	done < <(grep -v '^[[:space:]]*\(#\|$\)' "$here/kernel/series")
	check cover-letter-shortlog "the shortlog names every patch${missing:+ (missing:$missing)}" \
		test -z "$missing"
	# --base: the base commit build.sh makes (fixed identity and dates), and
	# each patch's "From <sha>" is the commit build.sh's git am made of it
	base=$(git -C "$tree" rev-list --max-parents=0 HEAD 2>/dev/null)
	check cover-letter-base "base-commit: is the build tree's base ($base)" \
		grep -qx "base-commit: $base" "$cover"
	want=$(git -C "$tree" rev-list --reverse "$base..HEAD" 2>/dev/null | tr '\n' ' ')
	got=$(while read -r p; do sed -n '1s/^From \([0-9a-f]\{40\}\) .*/\1/p' "$here/kernel/patches/$p"; done \
		< <(grep -v '^[[:space:]]*\(#\|$\)' "$here/kernel/series") | tr '\n' ' ')
	check patch-ids "each patch's From sha is the commit build.sh made of it" test "$want" = "$got"
	blurb=$(awk '/^Subject:/ { s = 1; next } s && /\([0-9]+\):$/ { exit } s' "$cover" | grep -c '[a-z]')
	check cover-letter-blurb "$blurb lines on what the series is for and how it was tested" \
		test "$blurb" -ge 10
fi
finish
