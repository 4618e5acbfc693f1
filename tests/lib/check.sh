# tests/lib/check.sh: the one way this project's shell tests report an
# assertion. Sourced (". tests/lib/check.sh") by
#   - the scenarios inside the outer VM, through tests/integration/scenarios/_lib.sh
#     (mkinitramfs.sh packs this file as /hwlab/lib/check.sh),
#   - tests/host/check-patches.sh and tests/host/bad_environment.sh on the host,
#   - tests/run.sh for its own host-side checks.
# It runs under busybox ash (the outer VM has no bash) and bash, also with
# "set -u" and "set -o pipefail": plain POSIX sh plus "local", no pipe whose
# reader may stop early.
#
# Every assertion prints exactly one line,
#     HWLAB-CHECK PASS|FAIL|SKIP name: detail
# which tests/run.sh counts into its "N passed, N failed, N skipped" summary.
# tests/integration/madvise_sigbus.c prints the same format from C.
#
#   pass NAME DETAIL              record a success the caller decided on
#   fail NAME DETAIL              record a failure the caller decided on
#   skip NAME REASON              the check cannot run here; counted, not failed
#   check NAME DETAIL COMMAND...  PASS iff COMMAND exits 0 (its output is dropped)
#   expect NAME WANT_RC PATTERN COMMAND...
#                                 run COMMAND with stdout and stderr captured;
#                                 PASS iff it exits WANT_RC and its output
#                                 contains PATTERN, a fixed string (no regex:
#                                 messages are full of '.', '(' and '['),
#                                 matched like grep -F. The output is echoed
#                                 with a "  | " prefix so that a log keeps it;
#                                 the FAIL detail names the exit status and the
#                                 last lines of output.
#   finish                        exit with the number of failures
#
# The counts so far are in hwlab_passes, hwlab_failures and hwlab_skips; a
# caller that runs another checker (madvise_sigbus) may add its failures to
# hwlab_failures so that finish reports them.

hwlab_passes=0
hwlab_failures=0
hwlab_skips=0

pass() {
	echo "HWLAB-CHECK PASS $1: $2"
	hwlab_passes=$((hwlab_passes + 1))
}

fail() {
	echo "HWLAB-CHECK FAIL $1: $2"
	hwlab_failures=$((hwlab_failures + 1))
}

skip() {
	echo "HWLAB-CHECK SKIP $1: $2"
	hwlab_skips=$((hwlab_skips + 1))
}

check() { # check NAME DETAIL COMMAND...
	local check_name=$1 check_detail=$2
	shift 2
	if "$@" >/dev/null 2>&1; then
		pass "$check_name" "$check_detail"
	else
		fail "$check_name" "$check_detail"
	fi
}

expect() { # expect NAME WANT_RC PATTERN COMMAND...
	local expect_name=$1 expect_want=$2 expect_pattern=$3 expect_out expect_rc expect_found
	shift 3
	expect_out=$("$@" 2>&1)
	expect_rc=$?
	if [ -n "$expect_out" ]; then
		printf '%s\n' "$expect_out" | sed 's/^/  | /'
	fi
	# case, not grep: a fixed-string match without a pipe that pipefail
	# could fail when grep -q stops reading early
	case $expect_out in
	*"$expect_pattern"*) expect_found=yes ;;
	*) expect_found=no ;;
	esac
	if [ "$expect_rc" -eq "$expect_want" ] && [ $expect_found = yes ]; then
		pass "$expect_name" "exit $expect_rc, '$expect_pattern'"
	else
		fail "$expect_name" "exit $expect_rc (want $expect_want), '$expect_pattern' $(
			[ $expect_found = yes ] && echo found || echo 'not found'), output: $(
			printf '%s\n' "$expect_out" | tail -n 3 | tr '\n' ' ')"
	fi
}

finish() { exit "$hwlab_failures"; }
