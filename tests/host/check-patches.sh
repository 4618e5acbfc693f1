#!/usr/bin/env bash
# Every patch of every base's series (kernel/BASE/series: 6.1, 6.12, 7.2) is
# a proper git format-patch mail (From, Subject, a changelog, Signed-off-by
# by its author) and checkpatch.pl --strict clean, using checkpatch from the
# kernel tree of that base the build unpacked (build/kernel.tree for 6.1,
# build/hosts/BASE/kernel.tree for the others: make host-kernel HOST=BASE);
# a base not built here is skipped with its name. Each series folder
# (kernel/BASE/SERIES/) has its cover letter.
# Reports through tests/lib/check.sh like the scenarios; exits with the
# number of failed checks.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/tests/lib/check.sh"

# series_lines BASE: kernel/BASE/series without comments and blank lines
series_lines() { grep -v '^[[:space:]]*\(#\|$\)' "$here/kernel/$1/series"; }

# new_files_maintained PATCH: every file PATCH adds lies under a directory
# that an "F:" line of $tree/MAINTAINERS names
new_files_maintained() {
	awk '/^diff --git / { file = $4; sub(/^b\//, "", file) }
		/^new file mode/ { print file }' "$1" |
		awk 'NR == FNR { if ($0 ~ /^F:\t.*\/$/) dirs[substr($0, 4)] = 1; next }
			{ ok = 0; for (d in dirs) if (index($0, d) == 1) ok = 1; if (!ok) bad = 1 }
			END { exit bad }' "$tree/MAINTAINERS" -
}

# check_patch BASE FILE: the mail, its changelog and checkpatch
check_patch() {
	local kbase=$1 f=$2 name from body upstream outside out ignore
	name=$(basename "$f" .patch)
	name=$kbase-${name:0:24}
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
			sh -c "[ \$(grep -c '^Signed-off-by: ' '$f') -ge 2 ] && grep -q '^\[.*$kbase' '$f'"
	else
		check "seed-link-$name" "names the 2009 HWPOISON mechanism it extends" grep -q '2009' "$f"
		check "history-$name" "version history (vN:) below the ---" \
			sh -c "awk '/^---\$/ { s = 1; next } s && /^diff --git/ { exit } s' '$f' | grep -qE '^ *v[0-9]+:'"
	fi
	# KVM's hwpoison lsb is x86's business: the generic API and the other
	# architectures stay as they are (v2 changed __gfn_to_pfn_memslot())
	case $f in *KVM-x86-mmu-Report-the-hugetlb-page-size*)
		outside=$(sed -n 's|^diff --git a/\([^ ]*\) .*|\1|p' "$f" | grep -v '^arch/x86/kvm/' | tr '\n' ' ')
		check "x86-only-$name" "touches only arch/x86/kvm/${outside:+ (also: $outside)}" test -z "$outside" ;;
	esac
	# a backport's "commit <id> upstream." names a commit of upstream's
	# history, which the build tree (a source package) does not have
	ignore=()
	[ -n "$upstream" ] && ignore=(--ignore UNKNOWN_COMMIT_ID)
	# checkpatch asks "does MAINTAINERS need updating?" of every patch that
	# adds a file, unless the patch touches MAINTAINERS; it does not need
	# to when a directory entry of the tree's MAINTAINERS already covers
	# each new file (a new KVM selftest, say)
	if grep -q '^new file mode' "$f" && new_files_maintained "$f"; then
		ignore+=(--ignore FILE_PATH_CHANGES)
	fi
	if out=$(cd "$tree" && "$checkpatch" --strict --no-tree -q "${ignore[@]}" "$f" 2>&1) && [ -z "$out" ]; then
		pass "checkpatch-$name" "checkpatch.pl --strict clean"
	else
		fail "checkpatch-$name" "checkpatch.pl --strict: $(echo "$out" | sed -n '1,3p' | tr '\n' ' ')"
	fi
}

# check_cover BASE SERIES TREE: kernel/BASE/SERIES/0000-cover-letter.patch
# (git format-patch --cover-letter; not in the series: git am has nothing to
# apply from it): [PATCH 0/N] for the N patches, a real subject and blurb,
# the shortlog naming each patch's subject, and base-commit: the base
# build.sh makes (fixed identity and dates). The series first in
# kernel/BASE/series is applied on that base alone, so each of its
# patches' "From <sha>" is the commit build.sh's git am made of it.
check_cover() {
	local kbase=$1 sdir=$2 tree=$3 first=$4 cover n missing p subj base want got blurb tag
	cover=$here/kernel/$kbase/$sdir/0000-cover-letter.patch
	tag=$kbase-$sdir
	mapfile -t ps < <(series_lines "$kbase" | grep "^$sdir/")
	n=${#ps[@]}
	if [ ! -f "$cover" ]; then
		fail "cover-letter-$tag" "no kernel/$kbase/$sdir/0000-cover-letter.patch"
		return
	fi
	# git format-patch pads the number to the width of the count: 00/10
	check "cover-letter-subject-$tag" "Subject: [PATCH 0/$n] (or 00/$n) with a subject of its own" \
		sh -c "grep -q '^Subject: \[PATCH 0*0/$n\] [^*]' '$cover' && ! grep -q '\*\*\*' '$cover'"
	missing=
	for p in "${ps[@]}"; do
		# the subject as the shortlog starts it (it wraps long ones)
		subj=$(sed -n '/^Subject:/{N;s/\n//;s/^Subject: \[PATCH [0-9]*\/[0-9]*\] //;p}' \
			"$here/kernel/$kbase/$p" | cut -c1-40)
		grep -qF "  $subj" "$cover" || missing="$missing $p"
	done
	check "cover-letter-shortlog-$tag" "the shortlog names every patch${missing:+ (missing:$missing)}" \
		test -z "$missing"
	base=$(git -C "$tree" rev-list --max-parents=0 HEAD 2>/dev/null)
	check "cover-letter-base-$tag" "base-commit: is the build tree's base ($base)" \
		grep -qx "base-commit: $base" "$cover"
	if [ "$first" = yes ]; then
		want=$(git -C "$tree" rev-list --reverse "$base..HEAD" 2>/dev/null | sed -n "1,${n}p" | tr '\n' ' ')
		got=$(for p in "${ps[@]}"; do sed -n '1s/^From \([0-9a-f]\{40\}\) .*/\1/p' "$here/kernel/$kbase/$p"; done |
			tr '\n' ' ')
		check "patch-ids-$tag" "each patch's From sha is the commit build.sh made of it" test "$want" = "$got"
	fi
	blurb=$(awk '/^Subject:/ { s = 1; next } s && /\([0-9]+\):$/ { exit } s' "$cover" | grep -c '[a-z]')
	check "cover-letter-blurb-$tag" "$blurb lines on what the series is for and how it was tested" \
		test "$blurb" -ge 10
}

for kbase in 6.1 6.12 7.2; do
	[ -f "$here/kernel/$kbase/series" ] || continue
	if [ -z "$(series_lines "$kbase")" ]; then
		pass "series-$kbase" "kernel/$kbase/series is empty: nothing to check"
		continue
	fi
	if [ "$kbase" = 6.1 ]; then
		tree=$(cat "$here/build/kernel.tree" 2>/dev/null)
	else
		tree=$(cat "$here/build/hosts/$kbase/kernel.tree" 2>/dev/null)
	fi
	checkpatch=$tree/scripts/checkpatch.pl
	if [ ! -x "$checkpatch" ]; then
		skip "series-$kbase" "no linux-source-$kbase tree built here (make host-kernel HOST=$kbase): its patches are not checked"
		continue
	fi
	# the loop reads from a process substitution, not a pipe, so that it
	# runs in this shell and its failures reach finish
	while read -r p; do
		check_patch "$kbase" "$here/kernel/$kbase/$p"
	done < <(series_lines "$kbase")
	first=yes
	for sdir in $(series_lines "$kbase" | cut -d/ -f1 | awk '!seen[$0]++'); do
		check_cover "$kbase" "$sdir" "$tree" "$first"
		first=no
	done
done
finish
