# tests/host/vmm_runs.sh, signals and the report channel (issue 19): each
# signal whose default action ends a process stops the VMM with its table
# removed; a closed, full or unread stdout stops it cleanly. Sourced by
# vmm_runs.sh (bash, set -uo pipefail): its helpers, $vmm, $guest, $tmp,
# $all_output and $pfx.
# shellcheck shell=bash

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
if wait_in_pipe_write "$pid" 3000; then
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
