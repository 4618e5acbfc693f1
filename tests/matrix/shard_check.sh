#!/usr/bin/env bash
# The host matrix's cells run alone and merge into the same tables however
# they were scheduled: CELLS (default "bookworm/smoke sid/smoke") run twice,
# once with make -j2 (two outer VMs at once) and once one after the other,
# each into a directory of its own; tests/matrix/merge.py's tables of the
# two must be equal, byte for byte (run times are not in them).
# Reports through tests/lib/check.sh; exits with the number of failed checks.
#
# Usage: tests/matrix/shard_check.sh [HOST/CASE...]   (make matrix-shard-check)
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/tests/lib/check.sh"
[ $# -gt 0 ] || set -- bookworm/smoke sid/smoke
out=${HWLAB_SHARD_OUT:-$here/build/shard-check}
rm -rf "$out" && mkdir -p "$out"
targets() { local d=$1 c; shift; for c in "$@"; do echo "$d/$c.json"; done; }

t0=$(date +%s)
make -C "$here" -j2 --no-print-directory CELLS_DIR="$out/parallel" \
	$(targets "$out/parallel" "$@") >"$out/parallel.out" 2>&1
rc_par=$?
t1=$(date +%s)
make -C "$here" -j1 --no-print-directory CELLS_DIR="$out/serial" \
	$(targets "$out/serial" "$@") >"$out/serial.out" 2>&1
rc_ser=$?
t2=$(date +%s)
echo "  make -j2: $((t1 - t0)) s (exit $rc_par); one after the other: $((t2 - t1)) s (exit $rc_ser)"
sed 's/^/  | /' "$out/parallel.out" "$out/serial.out" | grep '  | cell '

n_par=$(find "$out/parallel" -name '*.json' | wc -l)
n_ser=$(find "$out/serial" -name '*.json' | wc -l)
check shard-results "each run wrote one result file per cell ($# cells: $n_par with -j2, $n_ser serial)" \
	test "$n_par" -eq $# -a "$n_ser" -eq $#
# the two runs' cells overlapped: each -j2 cell started before the other ended
overlap=$(python3 - "$out/parallel" <<'PY'
import glob, json, sys, datetime
spans = []
for p in glob.glob(sys.argv[1] + "/*/*.json"):
    r = json.load(open(p))
    start = datetime.datetime.strptime(r["started"], "%Y-%m-%dT%H:%M:%SZ").timestamp()
    spans.append((start, start + r["seconds"]))
spans.sort()
print("yes" if len(spans) > 1 and spans[1][0] < spans[0][1] else "no")
PY
)
check shard-overlap "with make -j2 the cells ran at the same time (overlap: $overlap)" test "$overlap" = yes
"$here/tests/matrix/merge.py" "$out/parallel" >"$out/parallel.md"
"$here/tests/matrix/merge.py" "$out/serial" >"$out/serial.md"
check shard-same-tables "merge.py's tables of the -j2 run and the serial run are equal ($(wc -l <"$out/serial.md") lines; $out/*.md)" \
	cmp -s "$out/parallel.md" "$out/serial.md"
# merging shards: each cell's directory alone, then all together, is the same table too
mkdir -p "$out/shards"
i=0
for f in "$out"/parallel/*/*.json; do
	i=$((i + 1))
	mkdir -p "$out/shards/$i/$(basename "$(dirname "$f")")"
	cp "$f" "$out/shards/$i/$(basename "$(dirname "$f")")/"
done
"$here/tests/matrix/merge.py" "$out"/shards/* >"$out/shards.md"
check shard-merge-dirs "one directory per cell (as CI jobs' artifacts), merged, gives the same tables" \
	cmp -s "$out/shards.md" "$out/serial.md"
finish
