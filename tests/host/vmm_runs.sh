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

# --- runs on the host's /dev/kvm
if ! "$vmm" --check >"$logs/${pfx}host-vmm-check.log" 2>&1; then
	skip "${pfx}host-vmm" "no usable /dev/kvm on this host ($(tail -n 1 \
		"$logs/${pfx}host-vmm-check.log")): the clean run, malformed images, guest failure and log flood need one"
	finish
fi
if timed 300 --vcpus 2 --passes 3 "$guest" >"$logs/${pfx}host-vmm.log" &&
	[ "$(grep -c '"event":"guest_done".*"checksum_ok":true' "$logs/${pfx}host-vmm.log")" -eq 2 ]; then
	pass "${pfx}host-vmm" "2 vCPUs ran 3 passes of the guest to completion on the host's KVM"
else
	fail "${pfx}host-vmm" "see build/logs/${pfx}host-vmm.log: $(tail_of "$logs/${pfx}host-vmm.log")"
fi

# 1 GiB hugetlb RAM without a free 1 GiB page on this host: the VMM says
# what it needs and how to reserve it, and exits 1. A host with free 1 GiB
# pages is not made to lend one (the outer VM's hugepages_1g runs on them).
gig=/sys/kernel/mm/hugepages/hugepages-1048576kB
if [ ! -d "$gig" ]; then
	expect "${pfx}hugetlb-1g-none" 1 'this kernel has no 1 GiB huge pages' \
		timed 20 --backing hugetlb-1g --mem 1024 "$guest"
elif [ "$(cat "$gig/free_hugepages")" -eq 0 ]; then
	expect "${pfx}hugetlb-1g-none" 1 "it needs 1 free 1 GiB page, $gig/free_hugepages has 0 (reserve them: echo 1 > $gig/nr_hugepages, or boot with hugepagesz=1G hugepages=1)" \
		timed 20 --backing hugetlb-1g --mem 1024 "$guest"
else
	skip "${pfx}hugetlb-1g-none" "this host has $(cat "$gig/free_hugepages") free 1 GiB page(s): not taking one"
fi

echo 'not an elf file at all' >"$tmp/bad.elf"
expect "${pfx}malformed-image" 1 "malformed guest image $tmp/bad.elf: not an ELF file" \
	timed 20 "$tmp/bad.elf"
head -c 100 "$guest" >"$tmp/trunc.elf"
expect "${pfx}truncated-image" 1 'malformed guest image' timed 20 "$tmp/trunc.elf"
# A guest that logs in a loop: the guest_log lines stay within the rate
# limit (a burst of 50, then 20/s, per vCPU), and every line is either
# printed or counted in a guest_log_suppressed line: printed + held = sent.
# Each line is a VM exit on the host's KVM: 100000 took 111 s under ASan
# and ran past a 120 s bound beside a CPU hog on each core. 20000 are
# still 20 times the burst plus what 20/s lets through in the run; the bound
# is for a VMM that hangs, not a deadline for a slow machine.
flood=20000 flood_log=$logs/${pfx}log-flood.log
t0=$(date +%s)
timed 600 --guest-log-flood $flood --passes 1 "$guest" >"$flood_log"
rc=$?
secs=$(($(date +%s) - t0 + 1))
printed=$(grep -c '"event":"guest_log"' "$flood_log")
held=0
for n in $("$json_field" "$flood_log" count event=guest_log_suppressed); do
	held=$((held + n))
done
# the guest's "guest up" line is one more
if [ "$rc" -eq 0 ] && [ "$printed" -le $((50 + 20 * secs)) ] && [ "$held" -gt 0 ] &&
	[ $((printed + held)) -eq $((flood + 1)) ]; then
	pass "${pfx}guest-log-flood" "$flood lines in ${secs}s: $printed printed (at most $((50 + 20 * secs))), $held counted as suppressed"
else
	fail "${pfx}guest-log-flood" "exit $rc, $printed printed (at most $((50 + 20 * secs))), $held suppressed, want $((flood + 1)) in all: $(tail_of "$flood_log")"
fi
expect "${pfx}guest-fail-file-line" 1 '"event":"guest_fail","vcpu":0,"reason":"guest/guest.c:' \
	timed 20 --guest-fail-test "$guest"
# kill -BUS from other processes: counted apart from the kernel's AOs, whose
# 256-entry ring 1500 of them once filled (1225 overflows: a real AO then
# was dropped). Each of the first 5 gets a line, the rest only a summary at
# most once a second, and vmm_exit counts them all.
# start_bg LOG ARGS...: the VMM in the background (sets bg_pid, the timeout's,
# and bg_vmm, the VMM's own pid from vmm_start) once the guest has passed once
start_bg() {
	local log=$1 n=0
	shift
	timeout 300 "$vmm" "$@" >"$log" 2>&1 &
	bg_pid=$!
	while ! grep -q '"event":"guest_pass"' "$log" && kill -0 $bg_pid 2>/dev/null &&
		[ $n -lt 3000 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	# --live: the VMM goes on writing; its last line may be half written
	bg_vmm=$("$json_field" --live "$log" pid event=vmm_start)
}
# stop_bg LOG: SIGTERM, wait (sets bg_rc), keep the output for asan.sh
stop_bg() {
	kill -TERM "$bg_vmm" 2>/dev/null
	wait $bg_pid
	bg_rc=$?
	cat "$1" >>"$all_output"
}
# sigbus_pending PID: a SIGBUS still waits in PID's shared pending set
# (ShdPnd bit 6: signal 7). SIGBUS is not queued: a kill while one is
# pending is merged into it, so a count is exact only one at a time.
sigbus_pending() {
	local k v
	while read -r k v; do
		[ "$k" = ShdPnd: ] && return $(((16#$v & 0x40) == 0))
	done <"/proc/$1/status"
	return 1
}
# exit_field LOG NAME: a number from the vmm_exit line
exit_field() { "$json_field" "$1" "$2" event=vmm_exit; }
# foreign_report LOG: its foreign_signal and summary line counts, and vmm_exit's counts
foreign_report() {
	lines=$(grep -c '"event":"foreign_signal"' "$1")
	summaries=$(grep -c '"event":"foreign_signal_summary"' "$1")
	overflows=$(exit_field "$1" ao_overflows)
	foreign=$(exit_field "$1" foreign_signals)
}

kills=1500 bus_log=$logs/${pfx}kill-bus.log
start_bg "$bus_log" --passes 0 "$guest"
t0=$(date +%s)
sent=0
while [ $sent -lt $kills ] && kill -BUS "$bg_vmm" 2>/dev/null; do
	sent=$((sent + 1))
	# until the VMM took it (bounded by its life: /proc/PID goes with it)
	while sigbus_pending "$bg_vmm" 2>/dev/null; do :; done
done
stop_bg "$bus_log"
secs=$(($(date +%s) - t0 + 1))
foreign_report "$bus_log"
if [ "$bg_rc" -eq 0 ] && [ "$sent" -eq $kills ] && [ "${foreign:-x}" = $kills ] &&
	[ "${overflows:-x}" = 0 ] && [ "$lines" -eq 5 ] && [ "$summaries" -ge 1 ] &&
	[ "$summaries" -le $((secs + 2)) ] &&
	grep -q "\"event\":\"foreign_signal\".*\"si_code\":\"SI_USER\",\"sender_pid\":$$," "$bus_log"; then
	pass "${pfx}kill-bus-counted" "$kills kill -BUS one at a time in ${secs}s: foreign_signals $foreign, ao_overflows 0, 5 lines and $summaries summaries"
else
	fail "${pfx}kill-bus-counted" "exit $bg_rc, sent $sent: foreign_signals ${foreign:-none} (want $kills), ao_overflows ${overflows:-none} (want 0), $lines lines (want 5), $summaries summaries (want 1..$((secs + 2))): $(tail_of "$bus_log")"
fi
# the same as fast as kill goes: signals merge, none may take an AO's slot
flood_log=$logs/${pfx}kill-bus-flood.log
start_bg "$flood_log" --passes 0 "$guest"
for ((i = 0; i < kills; i++)); do
	kill -BUS "$bg_vmm" 2>/dev/null || break
done
stop_bg "$flood_log"
foreign_report "$flood_log"
if [ "$bg_rc" -eq 0 ] && [ "${overflows:-x}" = 0 ] && [ "${foreign:-0}" -ge 1 ] &&
	[ "$foreign" -le $kills ] && [ "$lines" -le 5 ]; then
	pass "${pfx}kill-bus-flood" "$kills kill -BUS at once: $foreign taken (the rest merged), ao_overflows 0, $lines lines and $summaries summaries"
else
	fail "${pfx}kill-bus-flood" "exit $bg_rc: foreign_signals ${foreign:-none}, ao_overflows ${overflows:-none} (want 0), $lines lines (want at most 5): $(tail_of "$flood_log")"
fi

# --- the report channel, the console's paths and signals (issue 19)
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

# --console: every output path opened without following a symlink, never
# another user's file, a file with other names or the memslot tables'
# directory (a planted symlink once carried guest lines into a VMM's table,
# where each became a slot). A fake bzImage: the console is opened before
# the kernel is read, so an accepted path ends at "not a bzImage".
fakebz=$tmp/fake-bzImage
head -c 8192 /dev/zero >"$fakebz"
notbz='not a bzImage'
: >"$tmp/victim"
ln -s "$tmp/victim" "$tmp/con-symlink"
expect "${pfx}console-symlink" 1 'is a symbolic link' \
	timed 10 --kernel "$fakebz" --console "$tmp/con-symlink"
ln -s "$tmp/not-yet" "$tmp/con-dangling"
expect "${pfx}console-dangling-symlink" 1 'is a symbolic link' \
	timed 10 --kernel "$fakebz" --console "$tmp/con-dangling"
check "${pfx}console-dangling-symlink-no-file" "no file made where the dangling symlink pointed" \
	test ! -e "$tmp/not-yet"
: >"$tmp/con-linked"
ln "$tmp/con-linked" "$tmp/con-link2"
expect "${pfx}console-hard-link" 1 'has 2 hard links' \
	timed 10 --kernel "$fakebz" --console "$tmp/con-linked"
if [ "$(id -u)" -eq 0 ]; then
	: >"$tmp/con-theirs"
	chown 65534 "$tmp/con-theirs"
	expect "${pfx}console-other-user" 1 'belongs to uid 65534' \
		timed 10 --kernel "$fakebz" --console "$tmp/con-theirs"
	table_dir=/run/hwlab-vmm
else
	skip "${pfx}console-other-user" "not root: cannot make a file another user owns"
	table_dir=/tmp/hwlab-vmm-$(id -u)
fi
# the table directory exists: the runs above published their tables in it
expect "${pfx}console-table-dir" 1 "in the memslot tables' directory" \
	timed 10 --kernel "$fakebz" --console "$table_dir/1.memmap"
ln -s "$table_dir" "$tmp/table-dir-link"
expect "${pfx}console-table-dir-symlinked" 1 "in the memslot tables' directory" \
	timed 10 --kernel "$fakebz" --console "$tmp/table-dir-link/1.memmap"
check "${pfx}console-table-dir-untouched" "no 1.memmap made in $table_dir" test ! -e "$table_dir/1.memmap"
expect "${pfx}console-char-device" 1 'not a regular file, a FIFO, a terminal or /dev/null' \
	timed 10 --kernel "$fakebz" --console /dev/zero
expect "${pfx}console-dev-null" 1 "$notbz" timed 10 --kernel "$fakebz" --console /dev/null
expect "${pfx}console-new-file" 1 "$notbz" timed 10 --kernel "$fakebz" --console "$tmp/con-new"
check "${pfx}console-new-file-0600" "a new console file is mode 0600" \
	sh -c "ls -ln '$tmp/con-new' | grep -q '^-rw------- '"
# Start-up never blocks on a console path: a FIFO with no reader used to
# block open() for ever, as did --console-in on a FIFO with no writer.
mkfifo "$tmp/con-fifo" "$tmp/con-in-fifo"
expect "${pfx}console-fifo-no-reader" 1 'a FIFO with no reader' \
	timed 10 --kernel "$fakebz" --console "$tmp/con-fifo"
# A real kernel, so that the VMM gets as far as starting the guest (the
# input used to be opened after the kernel was loaded); the guest need not
# boot: vmm_start is the state waited for.
if [ -f "$here/build/bzImage" ]; then
	"$vmm" --kernel "$here/build/bzImage" --console /dev/null --console-in "$tmp/con-in-fifo" \
		--memmap "$tmp/con-in.memmap" >"$tmp/con-in.log" 2>&1 &
	pid=$!
	if wait_file_has "$tmp/con-in.log" '"event":"vmm_start"' "$pid"; then
		pass "${pfx}console-in-fifo-no-writer" "started with --console-in a FIFO nobody writes"
	else
		fail "${pfx}console-in-fifo-no-writer" "no vmm_start line: $(tail_of "$tmp/con-in.log")"
	fi
	kill -TERM "$pid" 2>/dev/null
	ended_within "$pid" 30 || fail "${pfx}console-in-fifo-no-writer-stop" "SIGTERM did not end it"
	cat "$tmp/con-in.log" >>"$all_output"
else
	skip "${pfx}console-in-fifo-no-writer" "no build/bzImage (make kernel): the VMM must get as far as starting a Linux guest"
fi
# --console-in feeds the guest: never through a symlink, never another
# user's file (a planted link to a root-only file would hand it to the guest)
echo secret >"$tmp/con-in-secret"
ln -s "$tmp/con-in-secret" "$tmp/con-in-link"
expect "${pfx}console-in-symlink" 1 'is a symbolic link (the guest is never fed through one)' \
	timed 10 --kernel "$fakebz" --console /dev/null --console-in "$tmp/con-in-link"
if [ "$(id -u)" -eq 0 ]; then
	echo theirs >"$tmp/con-in-theirs"
	chown 65534 "$tmp/con-in-theirs"
	expect "${pfx}console-in-other-user" 1 'belongs to uid 65534, not to this VMM'"'"'s uid' \
		timed 10 --kernel "$fakebz" --console /dev/null --console-in "$tmp/con-in-theirs"
fi
# a directory used to start the guest with an input thread that had failed
expect "${pfx}console-in-directory" 1 'refusing --console-in' \
	timed 10 --kernel "$fakebz" --console /dev/null --console-in "$tmp"
expect "${pfx}console-in-own-file" 1 "$notbz" \
	timed 10 --kernel "$fakebz" --console /dev/null --console-in "$tmp/con-in-secret"
# a FIFO that has its reader is a console like any other. The reader is
# this shell, by a read-write open, which Linux never blocks: a background
# cat had not always reached its open() when the VMM looked (make
# test-loaded: "a FIFO with no reader")
exec 7<>"$tmp/con-fifo"
expect "${pfx}console-fifo-with-reader" 1 "$notbz" \
	timed 10 --kernel "$fakebz" --console "$tmp/con-fifo"
exec 7<&-
# The console is never stdout, the report channel: the default is stderr,
# refused where stderr is stdout (timed's 2>&1 into a pipe) and guest lines
# would read as reports (a guest printed a forged vmm_exit "ok").
expect "${pfx}console-not-stdout" 1 'stderr is stdout here' timed 10 --kernel "$fakebz"

# Signals: each whose default action ends a process stops the VMM with its
# table removed (SIGPIPE, SIGHUP, SIGALRM, SIGUSR2 used to leave it). The
# graceful ones stop the guest as SIGTERM does (exit 0, vmm_exit
# "stopped"); the core-dumping ones remove the table and end as the
# signal would (128 + its number; no core file). The VMM is ready once its
# vmm_start line is out: the table is published before it.
# (ASan would report the kill -SEGV/-FPE as a crash: not its handlers here.)
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0:handle_sigfpe=0:handle_sigill=0
graceful="HUP INT TERM ALRM USR2 IO PROF VTALRM STKFLT PWR"
for n in $(seq 0 $(($(kill -l RTMAX) - $(kill -l RTMIN)))); do
	graceful="$graceful RTMIN+$n"
done
core="QUIT ILL TRAP ABRT FPE SEGV SYS XCPU"
for sig in $graceful $core; do
	log=$tmp/sig-$sig.log table=$tmp/sig-$sig.memmap
	(ulimit -c 0 && exec "$vmm" --passes 0 --memmap "$table" "$guest" >"$log" 2>&1) &
	pid=$!
	if ! wait_file_has "$log" '"event":"vmm_start"' "$pid"; then
		ended_within "$pid" 1
		fail "${pfx}signal-$sig" "no vmm_start line: $(tail_of "$log")"
		continue
	fi
	kill -s "$sig" "$pid"
	ended_within "$pid" 30
	cat "$log" >>"$all_output"
	want=0
	case " $core " in *" $sig "*) want=$((128 + $(kill -l "$sig"))) ;; esac
	if [ "$end_rc" -eq "$want" ] && [ ! -e "$table" ] &&
		{ [ "$want" -ne 0 ] || grep -q '"event":"vmm_exit","status":"stopped"' "$log"; }; then
		pass "${pfx}signal-$sig" "exit $end_rc, table removed"
	else
		fail "${pfx}signal-$sig" "exit $end_rc (want $want), table $([ -e "$table" ] && echo left behind || echo removed): $(tail_of "$log")"
	fi
	rm -f "$table"
done

# stdout closed (hwlab-vmm ... | head -n 1): SIGPIPE is ignored, the report
# writer sees EPIPE and the VMM stops the guest and exits 4 with its table
# removed. Once the stop line after a SIGTERM raised SIGPIPE and left the
# table behind.
mkfifo "$tmp/head-pipe"
head -n 1 <"$tmp/head-pipe" >"$tmp/head-first" &
head_pid=$!
"$vmm" --passes 0 --memmap "$tmp/head.memmap" "$guest" >"$tmp/head-pipe" 2>"$tmp/head.err" &
pid=$!
ended_within "$head_pid" 60
kill -TERM "$pid" 2>/dev/null
ended_within "$pid" 30
cat "$tmp/head.err" >>"$all_output"
if [ "$end_rc" -eq 4 ] && [ ! -e "$tmp/head.memmap" ] && grep -q '"event":"vmm_start"' "$tmp/head-first"; then
	pass "${pfx}stdout-closed-sigterm" "exit 4 (report channel closed), table removed"
else
	fail "${pfx}stdout-closed-sigterm" "exit $end_rc (want 4), table $([ -e "$tmp/head.memmap" ] && echo left behind || echo removed): $(tail_of "$tmp/head.err")"
fi
rm -f "$tmp/head.memmap"

# stdout past the file size limit: SIGXFSZ is ignored (a guest flooding its
# console file must not end its VMM), the report writer sees EFBIG, and the
# VMM stops as for EPIPE. It used to die of SIGXFSZ, its table left behind.
# 2 KiB: vmm_start fits, the guest's lines soon do not.
(ulimit -f 2 && exec "$vmm" --passes 0 --guest-log-flood 1000 --memmap "$tmp/fsize.memmap" \
	"$guest" >"$tmp/fsize.log" 2>"$tmp/fsize.err") &
pid=$!
ended_within "$pid" 60
cat "$tmp/fsize.err" >>"$all_output"
if [ "$end_rc" -eq 4 ] && [ ! -e "$tmp/fsize.memmap" ]; then
	pass "${pfx}stdout-file-size-limit" "exit 4 at the limit ($(wc -c <"$tmp/fsize.log") bytes written), table removed"
else
	fail "${pfx}stdout-file-size-limit" "exit $end_rc (want 4), table $([ -e "$tmp/fsize.memmap" ] && echo left behind || echo removed): $(tail_of "$tmp/fsize.err")"
fi
rm -f "$tmp/fsize.memmap"

# A report flood into a stdout nobody reads (the pipe's reader holds it
# open and never reads): once a vCPU and the monitor both blocked in
# pipe_write and SIGTERM did nothing. Now the writer thread blocks alone
# and lines beyond its queue are dropped: SIGTERM ends the VMM within the
# final flush's bound, table removed. Waits for the state (a thread of the
# VMM in pipe_write), not for a time.
mkfifo "$tmp/unread"
sleep 600 <"$tmp/unread" &
sleeper=$!
"$vmm" --guest-log-flood 1000000 --passes 0 --memmap "$tmp/unread.memmap" "$guest" \
	>"$tmp/unread" 2>"$tmp/unread.err" &
pid=$!
n=0
while ! in_pipe_write "$pid" && [ -e "/proc/$pid" ] && [ $n -lt 3000 ]; do
	sleep 0.1
	n=$((n + 1))
done
if in_pipe_write "$pid"; then
	t0=$(date +%s)
	kill -TERM "$pid"
	ended_within "$pid" 30
	secs=$(($(date +%s) - t0))
	if [ "$end_rc" -eq 0 ] && [ ! -e "$tmp/unread.memmap" ]; then
		pass "${pfx}report-flood-unread-stdout" "SIGTERM with stdout full and unread: ended in ${secs}s, exit 0, table removed"
	else
		fail "${pfx}report-flood-unread-stdout" "exit $end_rc after ${secs}s (want 0 within 30s), table $([ -e "$tmp/unread.memmap" ] && echo left behind || echo removed)"
	fi
else
	ended_within "$pid" 1
	fail "${pfx}report-flood-unread-stdout" "stdout never filled up: $(tail_of "$tmp/unread.err")"
fi
kill "$sleeper" 2>/dev/null
wait "$sleeper" 2>/dev/null
cat "$tmp/unread.err" >>"$all_output"
rm -f "$tmp/unread.memmap"
# --- where the table lives (an attack re-run of issue 19's fixes)
# A live VMM's table, wherever it was published, never takes another VMM's
# console: each VMM holds a lock on its table, and a locked file is refused.
"$vmm" --passes 0 --memmap "$tmp/live.memmap" "$guest" >"$tmp/live.log" 2>&1 &
live=$!
if wait_file_has "$tmp/live.log" '"event":"vmm_start"' "$live"; then
	cp "$tmp/live.memmap" "$tmp/live.before"
	expect "${pfx}console-live-table" 1 'another process holds a lock on it' \
		timed 10 --kernel "$fakebz" --console "$tmp/live.memmap"
	check "${pfx}console-live-table-untouched" "the live table is as its VMM wrote it" \
		cmp -s "$tmp/live.memmap" "$tmp/live.before"
else
	fail "${pfx}console-live-table" "the VMM holding the table did not start: $(tail_of "$tmp/live.log")"
fi
# The table is removed relative to the directory it was made in, and only
# while its name is still that file: a root VMM's --memmap under another
# user's directory, whose subdirectory that user swapped for a symlink to a
# directory holding a file of the same name, used to remove that file.
mkdir -p "$tmp/ud/sub" "$tmp/protected"
echo keep >"$tmp/protected/t.memmap"
"$vmm" --passes 0 --memmap "$tmp/ud/sub/t.memmap" "$guest" >"$tmp/swap.log" 2>&1 &
pid=$!
if wait_file_has "$tmp/swap.log" '"event":"vmm_start"' "$pid"; then
	mv "$tmp/ud/sub" "$tmp/ud/moved"
	ln -s "$tmp/protected" "$tmp/ud/sub"
	kill -TERM "$pid"
	ended_within "$pid" 30
	check "${pfx}memmap-unlink-no-follow" "after the swap, SIGTERM left the other directory's t.memmap (exit $end_rc)" \
		test -f "$tmp/protected/t.memmap"
	check "${pfx}memmap-unlink-its-own" "and removed its own table where it was made" \
		test ! -e "$tmp/ud/moved/t.memmap"
else
	ended_within "$pid" 1
	fail "${pfx}memmap-unlink-no-follow" "no vmm_start line: $(tail_of "$tmp/swap.log")"
fi
# A file that --memmap refused is never the VMM's to remove: a core-dumping
# signal while the refusal's message waits on a full stderr pipe used to
# unlink it (the path was recorded before the create).
echo precious >"$tmp/precious"
mkfifo "$tmp/errpipe"
sleep 600 <"$tmp/errpipe" &
holder=$!
exec 9>"$tmp/errpipe"
head -c 65536 /dev/zero >&9	# the pipe is full: the next write blocks
"$vmm" --passes 1 --memmap "$tmp/precious" "$guest" >/dev/null 2>&9 &
pid=$!
n=0
while ! in_pipe_write "$pid" && [ -e "/proc/$pid" ] && [ $n -lt 600 ]; do
	sleep 0.1
	n=$((n + 1))
done
if in_pipe_write "$pid"; then
	kill -QUIT "$pid"
	ended_within "$pid" 30
	check "${pfx}memmap-refused-kept" "SIGQUIT during the refusal's message left the file there (exit $end_rc)" \
		test -f "$tmp/precious"
else
	ended_within "$pid" 1
	fail "${pfx}memmap-refused-kept" "the VMM never blocked on its stderr (exit $end_rc)"
fi
exec 9>&-
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
kill "$live" 2>/dev/null
wait "$live" 2>/dev/null
cat "$tmp/live.log" "$tmp/swap.log" >>"$all_output"
finish
