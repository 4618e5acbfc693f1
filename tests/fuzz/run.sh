#!/usr/bin/env bash
# make fuzz: each libFuzzer target for FUZZ_SECONDS, on a corpus kept in
# FUZZ_BUILD/corpus (it grows from run to run) started from the seeds of
# seeds.sh. A crash, sanitizer report or leak stops that fuzzer; its input
# is kept in FUZZ_BUILD/crashes/ and the run fails. Not part of make test.
# Usage: tests/fuzz/run.sh FUZZ_BUILD SECONDS (FUZZ_TARGETS='a b' for some)
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=$1 secs=$2
failed=0
"$here/tests/fuzz/seeds.sh" "$build/seeds" "$here/build/guest.elf" "$here/build/bzImage" \
	"$build/fuzz-stream-restore" || exit 2
mkdir -p "$build/crashes"
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
for target in ${FUZZ_TARGETS:-elf-load ucall bzimage stream-restore watch-request}; do
	# the restore's refusals each print a message (stderr closed; a crash
	# is still reported); a request line may be as long as PATH_MAX
	case $target in
	stream-restore) extra=-close_fd_mask=2 ;;
	watch-request) extra=-max_len=8192 ;;
	*) extra= ;;
	esac
	mkdir -p "$build/corpus/$target"
	echo "== fuzz-$target for ${secs}s (log: $build/fuzz-$target.log)"
	"$build/fuzz-$target" -max_total_time="$secs" -timeout=10 -print_final_stats=1 $extra \
		-artifact_prefix="$build/crashes/$target-" \
		"$build/corpus/$target" "$build/seeds/$target" >"$build/fuzz-$target.log" 2>&1
	rc=$?
	grep -a -E '^(stat::number_of_executed_units|stat::new_units_added|Done )' \
		"$build/fuzz-$target.log"
	if [ "$rc" -ne 0 ]; then
		echo "FAIL fuzz-$target: exit $rc"
		grep -a -m 5 -E 'ERROR|runtime error|Test unit written' "$build/fuzz-$target.log"
		failed=$((failed + 1))
	else
		echo "ok   fuzz-$target: $(ls "$build/corpus/$target" | wc -l) inputs in the corpus"
	fi
done
exit "$failed"
