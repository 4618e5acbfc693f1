# Issue #21, snapshot and restore: a Linux guest with poisoned pages is
# saved to a file (--snapshot, SIGUSR2) and started again from it in a new
# hwlab-vmm (--restore). The page the guest was told of stays poisoned and
# isolated; a page poisoned after the guest's last look (late kill: the VMM
# has not heard of it) is found by the copy, which reads every page through
# the kernel (EFAULT, not SIGBUS), and is poisoned again at the destination
# (UFFDIO_POISON), where the guest's next touch is an AR it recovers from.
# A cut, corrupted, foreign or non-snapshot file is refused and no guest
# runs.
. /hwlab/scenarios/_lib.sh

snap=$PWD/guest.snap
# the target rereads its pages every 20 s: a page poisoned just before the
# snapshot is not yet touched when it is taken
app="hwlab_inner.pages=8 hwlab_inner.interval_ms=20000"
echo 0 >/proc/sys/vm/memory_failure_early_kill

# --- the source: one page told (late kill, AR), one poisoned unseen --------
start_linux src.log src.con "$app" --vcpus 2 --snapshot "$snap"
src_pid=$vmm_pid
gpa2=$(page_field src.con 2 gpa)
expect src-poison-told 0 "\"gpa\":\"$gpa2\"" hwpoison-guest $vmm_pid "$gpa2"
wait_console src.con 'INNER-RESTART n=1'
wait_console src.con 'INNER-READY tag=target' 2
wait_console src.con 'INNER-ALIVE survivor=yes hardware_corrupted_kb=4'
check src-told "the source's guest recovered from page 2's AR (4 kB corrupted)" \
	grep -q "$REC"'INNER-ALIVE survivor=yes hardware_corrupted_kb=4' src.con
gpa3=$(page_field src.con 3 gpa)
expect src-poison-unseen 0 "\"gpa\":\"$gpa3\"" hwpoison-guest $vmm_pid "$gpa3"
kill -USR2 $vmm_pid
wait_for src.log '"event":"snapshot"'
stop_vmm src.log
snap_line=$(json_line src.log '"event":"snapshot"')
check snapshot-ok "the snapshot was written: $snap_line" line_has "$snap_line" '"status":"ok"'
check snapshot-told "page 2: on the list and told, sent poisoned without being read" \
	line_has "$snap_line" '"pages_poisoned":1,.*"poisoned_heard":1,"poisoned_told":1'
check snapshot-unreadable "page 3: the kernel refused to read it (EFAULT), sent unreadable" \
	line_has "$snap_line" '"pages_unreadable":1,'
expect_count snapshot-no-consumed 0 src.log '"action":"fatal"'
expect_count src-no-ar-page3 0 src.log '"si_code":"BUS_MCEERR_AR"' "\"gpa\":\"$gpa3\""
check src-stopped "the source ran on after the snapshot and stopped at SIGTERM" \
	test "$(json-field src.log status event=vmm_exit)" = stopped
hc_before=$(sed -n "s/${REC}INNER-ALIVE survivor=yes hardware_corrupted_kb=\([0-9]*\).*/\3/p" src.con | tail -n 1)

# --- the destination: the same guest goes on ---------------------------------
: >dst.con
: >dst.log
timeout -s KILL "$(bound 420)" hwlab-vmm --kernel "$LINUX_KERNEL" --initrd "$LINUX_INITRD" \
	--console dst.con --console-stamp --append "$(linux_append "$app")" --vcpus 2 \
	--restore "$snap" >dst.log 2>dst.log.err &
vmm_pid=$!
wait_for dst.log '"event":"restore"'
restore_line=$(json_line dst.log '"event":"restore"')
# (its reason holds a quote: line_has, never an sh -c string)
check restore-ok "restored: $restore_line" line_has "$restore_line" '"status":"ok"'
# Without UFFDIO_POISON (bookworm's stock 6.1) the destination keeps the
# pages on its list only and says why; the guest is then told of the page
# at once (an AO owed), not when its target touches it
if host_has uffd-poison; then
	check restore-poison-kept "both pages poisoned again with UFFDIO_POISON markers" \
		line_has "$restore_line" '"poison_kept":"uffd_poison",.*"marked_pages":2,'
else
	check restore-poison-listed "no UFFDIO_POISON here: the pages kept on the list, and why" \
		line_has "$restore_line" '"poison_kept":"list_only","poison_kept_why":"the kernel lacks UFFDIO_POISON'
fi
wait_console dst.con 'INNER-ALIVE survivor=yes'
first_alive=$(grep "$REC"'INNER-ALIVE' dst.con | head -n 1)
if need_host uffd-poison dst-hwcorrupt-kept "the guest's count unchanged until its target touches the marker"; then
	check dst-hwcorrupt-kept "the guest runs on with its own count unchanged ($hc_before kB): $first_alive" \
		line_has "$first_alive" "survivor=yes hardware_corrupted_kb=$hc_before\$"
fi
# the target rereads page 3 within 20 s: the marker makes it an AR here
wait_console dst.con 'INNER-RESTART n=2'
wait_console dst.con 'INNER-ALIVE survivor=yes hardware_corrupted_kb=8'
stop_vmm dst.log
show_console dst.con
need_host uffd-poison dst-ar "the target's touch of the marker an AR on the destination" &&
	expect_count dst-ar 1 dst.log '"si_code":"BUS_MCEERR_AR"' "\"gpa\":\"$gpa3\"" '"action":"inject"'
check dst-recovered "the destination's guest isolated page 3 and restarted its target" \
	grep -q "$REC"'INNER-RESTART n=2' dst.con
check dst-survivor "the survivor lives; the guest counts 8 kB corrupted" \
	grep -q "$REC"'INNER-ALIVE survivor=yes hardware_corrupted_kb=8' dst.con
check dst-no-corrupt "no page read back wrong" sh -c '! grep -q INNER-CORRUPT dst.con'
check dst-no-panic "no oops or panic in the guest" \
	sh -c '! grep -qE "Kernel panic|Oops|BUG:" dst.con'
expect_count dst-page2-untouched 0 dst.log '"si_code":"BUS_MCEERR_AR"' "\"gpa\":\"$gpa2\""

# --- refusals: nothing runs --------------------------------------------------
size=$(stat -c %s "$snap")
head -c $((size / 2)) "$snap" >cut.snap
cp "$snap" flipped.snap
printf '\377' | dd of=flipped.snap bs=1 seek=$((size / 3)) conv=notrunc 2>/dev/null
# restore_refused NAME FILE WHY ARGS... : exit 1, a refused line, WHY on stderr, no console output
restore_refused() {
	rr_name=$1 rr_file=$2 rr_why=$3
	shift 3
	: >"$rr_name.con"
	timed_vmm --kernel "$LINUX_KERNEL" --initrd "$LINUX_INITRD" --console "$rr_name.con" \
		--append "$(linux_append "$app")" --vcpus 2 --restore "$rr_file" "$@" \
		>"$rr_name.log" 2>"$rr_name.log.err"
	rr_rc=$?
	sed 's/^/  vmm(stderr): /' "$rr_name.log.err"
	check "refuse-$rr_name" "exit 1, refused, '$rr_why', and the guest never ran" \
		sh -c "[ $rr_rc -eq 1 ] && grep -q '\"event\":\"restore\",\"status\":\"refused\"' $rr_name.log &&
		       grep -q -- '$rr_why' $rr_name.log.err && [ ! -s $rr_name.con ]"
}
restore_refused cut cut.snap "cut short"
restore_refused corrupted flipped.snap "is corrupted"
restore_refused foreign "$snap" "saved from another machine: the guest.s memory" --mem 256
restore_refused not-a-snapshot "$LINUX_KERNEL" "not an hwlab-vmm state stream"
ln -s "$snap" link.snap
restore_refused symlink link.snap "Too many levels of symbolic links"
finish
