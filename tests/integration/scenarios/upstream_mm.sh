# Upstream's own mm selftests on the running outer kernel: the programs
# scripts/upstream-selftests.sh built from the same Debian source tree as
# this kernel's base (uname -r: 6.1.x, 6.12.x, 7.2.x), packed by
# make upstream-selftests as /hwlab/data/selftests/BASE/ with its rows of
# tests/upstream/mm.list, beside tests/upstream/mm.known. Each row runs with
# its setup and a timeout; its exit status (0 pass, 4 kselftest's skip,
# else fail) is one check, upstream/ID, and each TAP result line it prints
# another, upstream/ID/SUBTEST. A failure mm.known explains for this base (a
# CONFIG option our kernel leaves out, a feature the tree predates) is a
# SKIP naming that reason, never a pass. The last line:
#   HWLAB-UPSTREAM base=B source="PKG VERSION" passed=N failed=N skipped=N ...
# counting tests (rows), the subtests after it.
# hwlab.upstream_only=ID[,ID...] runs only those rows (while debugging one).
. /hwlab/scenarios/_lib.sh
. /hwlab/scenarios/_upstream.sh

base=$(upstream_base)
set_dir=/hwlab/data/selftests/$base
UPSTREAM_KNOWN=/hwlab/data/selftests/mm.known
only=$(sed -n 's/.*hwlab\.upstream_only=\([^ ]*\).*/\1/p' /proc/cmdline)
if [ ! -f "$set_dir/list" ]; then
	skip upstream "no selftests for base ${base:-?} (kernel $(uname -r)) in this image: make upstream-selftests packs them"
	echo "HWLAB-UPSTREAM base=${base:-?} passed=0 failed=0 skipped=0 known=0 (no selftests in the image)"
	finish
fi
source_version=$(cat "$set_dir/version")
echo "  upstream: base $base, kernel $(uname -r), selftests of $source_version"
# programs the build left out (scripts/upstream-selftests.sh's unbuilt)
while read -r prog why; do
	[ -n "$prog" ] && echo "  upstream: not built: $prog $why"
done <"$set_dir/unbuilt"

# A work directory with ./huge, a hugetlbfs mount (6.1's hugetlb tests
# take files there); nobody (on-fault-limit: root is not held to
# RLIMIT_MEMLOCK) must reach it and the programs.
work=/tmp/upstream
mkdir -p "$work/huge"
mount -t hugetlbfs none "$work/huge" || echo "  upstream: cannot mount hugetlbfs on $work/huge"
chmod 1777 "$work" "$work/huge"
mkdir -p /etc
# (the image's root is mkinitramfs.sh's mktemp -d, mode 0700: nobody could
# not even reach /bin/sh)
chmod 755 /
grep -q '^nobody:' /etc/passwd 2>/dev/null || echo 'nobody:x:65534:65534:nobody:/tmp:/bin/sh' >>/etc/passwd
grep -q '^nobody:' /etc/group 2>/dev/null || echo 'nobody:x:65534:' >>/etc/group
echo 0 >/proc/sys/vm/nr_hugepages

t_passed=0 t_failed=0 t_skipped=0 t_known=0
s_passed=0 s_failed=0 s_skipped=0
# result KIND NAME TEXT: one check, counted as a test (KIND test) or a subtest
result() {
	case $2 in
	pass) pass "$3" "$4"; [ "$1" = test ] && t_passed=$((t_passed + 1)) || s_passed=$((s_passed + 1)) ;;
	fail) fail "$3" "$4"; [ "$1" = test ] && t_failed=$((t_failed + 1)) || s_failed=$((s_failed + 1)) ;;
	skip) skip "$3" "$4"; [ "$1" = test ] && t_skipped=$((t_skipped + 1)) || s_skipped=$((s_skipped + 1)) ;;
	esac
}

# run_row ID TIMEOUT NEEDS COMMAND...
run_row() {
	local id=$1 limit needs=$3 log=/tmp/upstream-$1.log rc t0 secs why res sub swhy
	local known_subs=0 failed_subs=0
	limit=$(bound "$2")
	shift 3
	if ! setup_needs "$needs"; then
		undo_setup
		result test skip "upstream/$id" "$setup_why"
		return
	fi
	if [ ! -x "$set_dir/$1" ]; then
		undo_setup
		why="$1 is not in the image (build: $(grep "^$1 " "$set_dir/unbuilt"))"
		if kwhy=$(known_reason "$base" "$id"); then
			t_known=$((t_known + 1))
			result test skip "upstream/$id" "known on $base: $kwhy ($why)"
		else
			result test fail "upstream/$id" "$why"
		fi
		return
	fi
	echo "  upstream: run $id: $* (needs $needs, up to ${limit}s)"
	t0=$(date +%s)
	# a line a minute while it runs: a test silent for minutes (userfaultfd
	# on hugetlb) must not look like a frozen VM to boot.sh's watchdog
	(while sleep 60; do echo "  upstream: $id still running"; done) &
	heartbeat=$!
	# the program also in the directory it runs in: some exec themselves
	# as ./NAME (ksm_functional_tests' fork-exec cases: "Binary not found")
	ln -sf "$set_dir/$1" "$run_dir/$1"
	(cd "$run_dir" && if [ -n "$run_as" ]; then
		timeout "$limit" $run_as "$set_dir/$*"
	else
		prog=$1
		shift
		timeout "$limit" "$set_dir/$prog" "$@"
	fi) </dev/null >"$log" 2>&1
	rc=$?
	kill $heartbeat
	secs=$(($(date +%s) - t0))
	rm -rf "${work:?}/huge/"*
	rm -f "$run_dir/${1%% *}"
	undo_setup
	# what the next test starts from: the page cache dropped, memory compacted
	echo 3 >/proc/sys/vm/drop_caches
	echo 1 >/proc/sys/vm/compact_memory 2>/dev/null
	show_output "$log"
	tap_results "$log" >"$log.tap"
	while read -r res sub swhy; do
		if [ "$res" = fail ]; then
			failed_subs=$((failed_subs + 1))
			if why=$(known_reason "$base" "$id/$sub"); then
				known_subs=$((known_subs + 1))
				result sub skip "upstream/$id/$sub" "known on $base: $why"
				continue
			fi
		fi
		result sub "$res" "upstream/$id/$sub" "${swhy:-$res}"
	done <"$log.tap"
	# a stress loop without an end of its own: stopped by the timeout
	# (busybox timeout: 143, SIGTERM) after running without a failure
	if [ -n "$stress" ] && { [ $rc -eq 143 ] || [ $rc -eq 124 ]; }; then
		result test pass "upstream/$id" "ran ${secs}s without failing, stopped at its timeout"
		return
	fi
	case $rc in
	0) res=pass why="exit 0 in ${secs}s" ;;
	4) res=skip why="kselftest skip (exit 4): $(grep -v '^ok ' "$log" | grep . | tail -n 1)" ;;
	124 | 143 | 137) res=fail why="did not finish in ${limit}s" ;;
	*) res=fail why="exit $rc in ${secs}s: $(grep -v '^ok ' "$log" | tail -n 1)" ;;
	esac
	# khugepaged's exit status is its number of failures: 4 is no skip
	[ -n "$exitcount" ] && [ $rc -eq 4 ] && res=fail why="exit 4: 4 of its checks failed"
	# an exit 0 with every TAP subtest skipped tested nothing (migration
	# on one NUMA node)
	if [ $res = pass ] && [ -s "$log.tap" ] && ! grep -q '^pass ' "$log.tap" && ! grep -q '^fail ' "$log.tap"; then
		res=skip why="every subtest skipped ($(grep -c '^skip ' "$log.tap")), exit 0: nothing tested"
	fi
	if [ $res != pass ] && kwhy=$(known_reason "$base" "$id"); then
		t_known=$((t_known + 1))
		result test skip "upstream/$id" "known on $base: $kwhy ($why)"
	elif [ $res = fail ] && [ $failed_subs -gt 0 ] && [ $known_subs -eq $failed_subs ]; then
		t_known=$((t_known + 1))
		result test skip "upstream/$id" "only known subtests failed ($known_subs, SKIP above): $why"
	else
		if [ $res = pass ] && kwhy=$(known_reason "$base" "$id"); then
			why="$why; mm.known lists it as known on $base ($kwhy): that entry is stale"
		fi
		result test "$res" "upstream/$id" "$why"
	fi
}

t_start=$(date +%s)
upstream_rows "$base" >/tmp/upstream-rows
# the rows on a descriptor of their own: a test must not read them
exec 3</tmp/upstream-rows
while read -r set_dir id limit needs cmd <&3; do
	[ -n "$id" ] || continue
	# a newer tree's test of a feature our series backports: ID@NEWER
	[ "$set_dir" = "/hwlab/data/selftests/$base" ] || id=$id@${set_dir##*/}
	case ",${only:-$id}," in *",$id,"*) ;; *) continue ;; esac
	[ "$set_dir" = "/hwlab/data/selftests/$base" ] ||
		echo "  upstream: $id is $(cat "$set_dir/version")'s test of a feature our $base series backports"
	# shellcheck disable=SC2086
	run_row "$id" "$limit" "$needs" $cmd
done
exec 3<&-
umount "$work/huge" 2>/dev/null
echo "HWLAB-UPSTREAM base=$base source=\"$source_version\" passed=$t_passed failed=$t_failed" \
	"skipped=$t_skipped known=$t_known subtests_passed=$s_passed subtests_failed=$s_failed" \
	"subtests_skipped=$s_skipped seconds=$(($(date +%s) - t_start))"
finish
