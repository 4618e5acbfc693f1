#!/usr/bin/env bash
# Regenerate one series, kernel/BASE/SERIES/, and its lines of
# kernel/BASE/series from a kernel tree whose commits on top of its
# linux-source-BASE base are that series (a copy of the tree kernel/build.sh
# applied the series in, edited with git). RANGE picks the series' commits
# when the tree holds more than one series (default: base..HEAD).
#
# The commits are first re-made on the canonical base commit, the one
# kernel/build.sh creates (same tree, committer and dates), with committer
# dates equal to author dates, as build.sh's git am makes them: then the
# cover letter's base-commit: names a commit anyone gets from build.sh, and
# each patch's "From <sha>" line is the commit build.sh makes of it (a
# series applied after another in kernel/BASE/series names the base too:
# each series is sent, and applies, on its own).
# git notes on the commits become the version history below each "---".
# The cover letter is git format-patch --cover-letter, with its subject and
# blurb taken from kernel/BASE/SERIES/cover-letter.txt (first line the
# subject, then a blank line and the blurb).
#
# Usage: kernel/format-series.sh BASE/SERIES KERNEL_TREE [RANGE]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: kernel/format-series.sh BASE/SERIES KERNEL_TREE [RANGE]"
name=${1:?$usage}
tree=${2:?$usage}
range=${3:-}
die() { echo "format-series: error: $*" >&2; exit 1; }
case $name in
*/*/* | */ | /* | *..*) die "'$name' is not BASE/SERIES" ;;
*/*) ;;
*) die "'$name' is not BASE/SERIES" ;;
esac
kbase=${name%%/*} sdir=${name#*/}
series_file=$here/kernel/$kbase/series
out_dir=$here/kernel/$kbase/$sdir
cover_text=$out_dir/cover-letter.txt
[ -f "$series_file" ] || die "no $series_file"

[ -d "$tree/.git" ] || die "$tree is not a git tree"
[ -f "$cover_text" ] || die "missing $cover_text"
cd "$tree"
[ -z "$(git status --porcelain --untracked-files=no)" ] || die "$tree has uncommitted changes"
old_base=$(git rev-list --max-parents=0 HEAD)
[ "$(echo "$old_base" | wc -l)" -eq 1 ] || die "HEAD has more than one root commit"
subject=$(git log -1 --format=%s "$old_base")
case $subject in "linux-source-$kbase "*) ;; *) die "the root commit is '$subject', not linux-source-$kbase's" ;; esac

# the same identity and date as kernel/build.sh's base commit
base_date=$(sed -n 's/^HWLAB_BASE_DATE="\(.*\)"$/\1/p' "$here/kernel/build.sh")
[ -n "$base_date" ] || die "no HWLAB_BASE_DATE in kernel/build.sh"
git_id=(-c user.name=hwpoison-lab -c user.email=hwpoison-lab@localhost)
base=$(GIT_AUTHOR_DATE=$base_date GIT_COMMITTER_DATE=$base_date \
	git "${git_id[@]}" commit-tree "$old_base^{tree}" -m "$subject")
if [ "$base" != "$old_base" ] || [ "$(git log -1 --format=%cI HEAD)" != "$(git log -1 --format=%aI HEAD)" ]; then
	git "${git_id[@]}" -c notes.rewriteRef=refs/notes/commits \
		rebase -q --committer-date-is-author-date --onto "$base" "$old_base"
fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# the series' commits: RANGE (on the rewritten history, by its end), or all
if [ -n "$range" ]; then
	first=${range%%..*} last=${range#*..}
	n_first=$(git rev-list --count "$old_base..$first" 2>/dev/null) || die "bad RANGE '$range'"
	n_last=$(git rev-list --count "$old_base..$last" 2>/dev/null) || die "bad RANGE '$range'"
	commits=$(git rev-list --reverse HEAD | sed -n "$((n_first + 1)),${n_last}p")
else
	commits=$(git rev-list --reverse "$base..HEAD")
fi
[ -n "$commits" ] || die "no commits in the series"
# each series on the base alone, as it is sent (cherry-picked in a scratch
# branch; cherry-pick has no -q in git 2.39, so its output goes to /dev/null)
scratch=hwlab-format-series-$$
git branch -q -f "$scratch" "$base"
git "${git_id[@]}" -c advice.detachedHead=false checkout -q "$scratch"
for c in $commits; do
	GIT_COMMITTER_DATE=$(git log -1 --format=%aI "$c") \
		git "${git_id[@]}" cherry-pick --allow-empty "$c" >/dev/null ||
		{ git cherry-pick --abort 2>/dev/null || true; git checkout -q -; git branch -q -D "$scratch"; die "commit $c does not apply to the base alone"; }
	git notes copy "$c" HEAD 2>/dev/null || true
done
git format-patch -q --cover-letter --base="$base" --notes -o "$out" "$base..HEAD"
git checkout -q -
git branch -q -D "$scratch"
cover=$(ls "$out"/0000-cover-letter.patch)
python3 - "$cover" "$cover_text" <<'PY'
import sys
cover, text = sys.argv[1], open(sys.argv[2]).read()
subject, _, blurb = text.partition("\n\n")
s = open(cover).read()
assert "*** SUBJECT HERE ***" in s and "*** BLURB HERE ***" in s, "unexpected cover letter"
s = s.replace("*** SUBJECT HERE ***", subject.strip()).replace("*** BLURB HERE ***", blurb.strip())
open(cover, "w").write(s)
PY
mkdir -p "$out_dir"
rm -f "$out_dir"/*.patch
cp "$out"/*.patch "$out_dir/"
# the series' lines in kernel/BASE/series: where its old lines were (or at
# the end), every other line kept
python3 - "$series_file" "$sdir" "$out" <<'PY'
import os, sys
path, sdir, out = sys.argv[1:]
new = [f"{sdir}/{f}" for f in sorted(os.listdir(out)) if f != "0000-cover-letter.patch"]
lines = open(path).read().splitlines()
kept, at = [], None
for line in lines:
    if line.strip().startswith(sdir + "/"):
        at = len(kept) if at is None else at
        continue
    kept.append(line)
at = len(kept) if at is None else at
open(path, "w").write("\n".join(kept[:at] + new + kept[at:]) + "\n")
PY
echo "format-series: $(echo "$commits" | wc -l) patches on base $base written to kernel/$kbase/$sdir/"
