#!/usr/bin/env bash
# hwlab-vmm on this host: what it is fed and how it answers.
#   - bad input gets a clear message and a non-zero exit (1: a bad guest
#     image, 2: a bad command line), quickly: every run is under timeout, so
#     a VMM that blocks fails here instead of hanging make test;
#   - with a usable /dev/kvm, a clean 2-vCPU run, malformed images (checked
#     after the VM exists), a failing guest and one that floods its log. No poisoning: the host kernel
#     is not ours to poison. Without /dev/kvm those are one counted SKIP.
# tests/host/asan.sh runs the same checks on the ASan+UBSan build.
#
# Usage: tests/host/vmm_runs.sh [VMM [LOGDIR]]
#        (default build/hwlab-vmm and build/logs)
# Env:   HWLAB_CHECK_PREFIX  put before every check name and log name
# Every VMM run's output is also appended to LOGDIR/PREFIXvmm-output.log,
# for asan.sh to search for sanitizer reports. Exits with the failed checks.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/tests/lib/check.sh"
vmm=${1:-$here/build/hwlab-vmm}
logs=${2:-$here/build/logs}
guest=$here/build/guest.elf
json_field=$here/build/json-field
pfx=${HWLAB_CHECK_PREFIX:-}
all_output=$logs/${pfx}vmm-output.log
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$logs"
: >"$all_output"

# timed SECONDS ARGS...: the VMM, killed (exit 124) if it outlives SECONDS
timed() {
	local limit=$1
	shift
	timeout "$limit" "$vmm" "$@" 2>&1 | tee -a "$all_output"
}

# tail_of FILE: its last lines on one line, for a FAIL detail
tail_of() { tail -n 5 "$1" | tr '\n' ' '; }

# --- waiting on a VMM: its end, a line of its output, a write it blocks in
# ended_within PID SECONDS: wait for our child PID to end (a zombie, or gone),
# then reap it into end_rc; a process still there after SECONDS is killed
# (end_rc 137) and 1 returned. The bound is for a hang, not a delay: the
# loop returns as soon as the process has ended.
ended_within() {
	local n=0 state
	while state=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1) &&
		[ -n "$state" ] && [ "$state" != Z ] && [ $n -lt $(($2 * 10)) ]; do
		sleep 0.1
		n=$((n + 1))
	done
	if [ -n "$state" ] && [ "$state" != Z ]; then
		kill -KILL "$1" 2>/dev/null
		wait "$1" 2>/dev/null
		end_rc=137
		return 1
	fi
	# (bash's "Segmentation fault" job notice is not the VMM's output)
	wait "$1" 2>/dev/null
	end_rc=$?
	return 0
}
# wait_file_has FILE PATTERN PID: until FILE holds PATTERN or PID ended; 60 s bound
wait_file_has() {
	local n=0
	while ! grep -q -- "$2" "$1" 2>/dev/null && [ -e "/proc/$3" ] &&
		[ "$(sed 's/.*) //' "/proc/$3/stat" 2>/dev/null | cut -c1)" != Z ] && [ $n -lt 600 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	grep -q -- "$2" "$1" 2>/dev/null
}
# in_pipe_write PID: a thread of PID sleeps in pipe_write (its reader stopped reading)
# (read whole, then matched: grep -q would stop early, and under pipefail cat's
# SIGPIPE would make a match count as none)
in_pipe_write() { [[ $(cat /proc/"$1"/task/*/wchan 2>/dev/null) == *pipe_write* ]]; }
# wait_in_pipe_write PID TENTHS: until a thread of PID sleeps in pipe_write,
# PID is gone or TENTHS tenths of a second passed; true when it sleeps there
wait_in_pipe_write() {
	local n=0
	while ! in_pipe_write "$1" && [ -e "/proc/$1" ] && [ "$n" -lt "$2" ]; do
		sleep 0.1
		n=$((n + 1))
	done
	in_pipe_write "$1"
}

# --- input the VMM refuses before it opens /dev/kvm
expect "${pfx}missing-image" 1 'cannot open guest image' timed 10 "$tmp/nonexistent.elf"
# Not a regular file: a FIFO once blocked the VMM forever, a directory made
# it malloc 2^63 bytes. A sparse file stands in for a huge image.
mkfifo "$tmp/fifo"
expect "${pfx}image-fifo" 1 "guest image $tmp/fifo is a FIFO, not a regular file" \
	timed 10 "$tmp/fifo"
expect "${pfx}image-directory" 1 "guest image $tmp is a directory, not a regular file" \
	timed 10 "$tmp"
expect "${pfx}image-device" 1 'guest image /dev/null is a character device, not a regular file' \
	timed 10 /dev/null
truncate -s 65M "$tmp/huge.elf"
expect "${pfx}image-too-big" 1 "guest image $tmp/huge.elf is 68157440 bytes, more than the 64 MiB" \
	timed 10 "$tmp/huge.elf"
expect "${pfx}bad-option" 2 "bad value 'floppy'" timed 10 --backing floppy "$guest"
expect "${pfx}bad-gpa" 2 'outside the guest' timed 10 --poison-gpa 0x40000000 "$guest"
# 1 GiB hugetlb pages are mapped whole: 16 MiB (the default) cannot be
expect "${pfx}hugetlb-1g-mem" 2 'must be a multiple of 1024 MiB per slot (1 slots), not 16 MiB' \
	timed 10 --backing hugetlb-1g "$guest"


# the rest, a file a concern, in this order (console.sh's files serve
# table.sh); kvm_runs.sh ends the check set on a host without /dev/kvm
# shellcheck source-path=SCRIPTDIR
# shellcheck source=vmm_runs/kvm_runs.sh
. "$here/tests/host/vmm_runs/kvm_runs.sh"
# shellcheck source=vmm_runs/console.sh
. "$here/tests/host/vmm_runs/console.sh"
# shellcheck source=vmm_runs/signals.sh
. "$here/tests/host/vmm_runs/signals.sh"
# shellcheck source=vmm_runs/table.sh
. "$here/tests/host/vmm_runs/table.sh"
# shellcheck source=vmm_runs/migrate.sh
. "$here/tests/host/vmm_runs/migrate.sh"
# shellcheck source=vmm_runs/hostile_stream.sh
. "$here/tests/host/vmm_runs/hostile_stream.sh"
# shellcheck source=vmm_runs/bounds.sh
. "$here/tests/host/vmm_runs/bounds.sh"
finish
