# tests/host/vmm_runs.sh, the console's paths (issue 19): --console and
# --console-in never follow a symlink or open another user's file, a file
# with other names or the memslot tables' directory, and start-up never
# blocks on a FIFO. Sourced by vmm_runs.sh (bash, set -uo pipefail): its
# helpers, $vmm, $here, $tmp, $all_output and $pfx; sets fakebz, notbz and
# table_dir for table.sh.
# shellcheck shell=bash

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
