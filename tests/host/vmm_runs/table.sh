# tests/host/vmm_runs.sh, where the memslot table lives (an attack re-run
# of issue 19's fixes): a live VMM's table never takes another VMM's
# console, and a VMM removes only its own table. Sourced by vmm_runs.sh
# (bash, set -uo pipefail) after console.sh: its helpers, $vmm, $guest,
# $tmp, $all_output, $pfx and console.sh's fakebz.
# shellcheck shell=bash

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
if wait_in_pipe_write "$pid" 600; then
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
