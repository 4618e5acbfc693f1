# tests/host/vmm_runs.sh, issue #21 on the host's KVM with the bare-metal
# guest (no poison here: that is the outer VM's evacuate and migrate
# scenarios): a snapshot taken mid-run and restored in a new VMM finishes
# with intact checksums; a live migration over a Unix socket does too, and
# the source says it moved the guest; options that cannot go together, a
# machine that differs and a planted socket path are refused. Sourced by
# vmm_runs.sh after kvm_runs.sh (so /dev/kvm works): its helpers, $vmm,
# $guest, $tmp, $logs and $pfx.
# shellcheck shell=bash

expect "${pfx}snapshot-and-migrate" 2 '--snapshot and --migrate-to both take SIGUSR2' \
	timed 10 --snapshot "$tmp/x" --migrate-to "unix:$tmp/y" "$guest"
expect "${pfx}restore-and-incoming" 2 '--restore and --incoming both give' \
	timed 10 --restore "$tmp/x" --incoming "unix:$tmp/y" "$guest"
expect "${pfx}incoming-address" 1 'a migration address is unix:PATH' \
	timed 20 --incoming tcp:127.0.0.1:4444 "$guest"
ln -s /nonexistent "$tmp/planted.sock"
expect "${pfx}incoming-planted" 1 "--incoming: listening on unix:$tmp/planted.sock: Address already in use" \
	timed 20 --incoming "unix:$tmp/planted.sock" "$guest"

# vmm_bg LOG ARGS...: the VMM in the background (bg_pid: the VMM's own, for
# its signals; not under timeout, which SIGUSR2 would end: ended_within
# bounds it), its output in LOG
vmm_bg() {
	local log=$1
	shift
	"$vmm" "$@" >"$log" 2>&1 &
	bg_pid=$!
}
# done_ok LOG: both vCPUs finished their passes with intact checksums
done_ok() { [ "$(grep -c '"event":"guest_done".*"checksum_ok":true' "$1")" -eq 2 ]; }

# --- a snapshot mid-run, restored in a new VMM ---
vmm_bg "$logs/${pfx}snap-src.log" --vcpus 2 --passes 2 --snapshot "$tmp/guest.snap" "$guest"
# after a pass: the restored guest checks what it wrote before the snapshot
wait_file_has "$logs/${pfx}snap-src.log" '"event":"guest_pass"' $bg_pid
kill -USR2 $bg_pid
wait_file_has "$logs/${pfx}snap-src.log" '"event":"snapshot"' $bg_pid
kill -KILL $bg_pid
ended_within $bg_pid 10
cat "$logs/${pfx}snap-src.log" >>"$all_output"
check "${pfx}snapshot-written" "a snapshot written mid-run, 0600: $(grep -o '"event":"snapshot".*' "$logs/${pfx}snap-src.log")" \
	sh -c "grep -q '\"event\":\"snapshot\",\"status\":\"ok\"' '$logs/${pfx}snap-src.log' &&
	       [ \$(stat -c %a '$tmp/guest.snap') = 600 ]"
timed 300 --vcpus 2 --passes 2 --restore "$tmp/guest.snap" "$guest" >"$logs/${pfx}snap-dst.log"
if grep -q '"event":"restore","status":"ok"' "$logs/${pfx}snap-dst.log" && done_ok "$logs/${pfx}snap-dst.log"; then
	pass "${pfx}snapshot-restored" "the restored guest finished its passes with intact checksums"
else
	fail "${pfx}snapshot-restored" "$(tail_of "$logs/${pfx}snap-dst.log")"
fi
expect "${pfx}restore-other-machine" 1 'saved from another machine: the vCPU count (--vcpus) differs' \
	timed 20 --vcpus 1 --passes 2 --restore "$tmp/guest.snap" "$guest"
head -c 100000 "$tmp/guest.snap" >"$tmp/cut.snap"
expect "${pfx}restore-cut" 1 'the state stream is cut short' \
	timed 20 --vcpus 2 --restore "$tmp/cut.snap" "$guest"

# --- a live migration over a Unix socket ---
vmm_bg "$logs/${pfx}mig-dst.log" --vcpus 2 --passes 2 --incoming "unix:$tmp/m.sock" "$guest"
dst_pid=$bg_pid
wait_file_has "$logs/${pfx}mig-dst.log" '"status":"listening"' $dst_pid
# at 4 MiB/s the guest, rewriting its working set, dirties more than 512
# pages during round 0 on an idle host: dirty rounds follow (on a loaded one
# perhaps none; either way the checksums say whether every page arrived)
vmm_bg "$logs/${pfx}mig-src.log" --vcpus 2 --passes 2 --migrate-to "unix:$tmp/m.sock" \
	--migrate-bandwidth 4 "$guest"
src_pid=$bg_pid
wait_file_has "$logs/${pfx}mig-src.log" '"event":"guest_pass"' $src_pid
kill -USR2 $src_pid
ended_within $src_pid 60
src_rc=$end_rc
ended_within $dst_pid 300
cat "$logs/${pfx}mig-src.log" "$logs/${pfx}mig-dst.log" >>"$all_output"
check "${pfx}migrate-source" "the source moved the guest and exited 0: $(grep -o '"event":"migrate",.*' "$logs/${pfx}mig-src.log")" \
	sh -c "[ $src_rc -eq 0 ] && grep -q '\"event\":\"migrate\",\"status\":\"ok\"' '$logs/${pfx}mig-src.log' &&
	       grep -q '\"event\":\"vmm_exit\",\"status\":\"migrated\"' '$logs/${pfx}mig-src.log'"
if [ "$end_rc" -eq 0 ] && grep -q '"event":"incoming","status":"ok"' "$logs/${pfx}mig-dst.log" &&
	done_ok "$logs/${pfx}mig-dst.log" && [ ! -e "$tmp/m.sock" ]; then
	pass "${pfx}migrate-destination" "the destination finished the passes with intact checksums after $(grep -c '"kind":"dirty"' "$logs/${pfx}mig-src.log") dirty round(s); its socket file is gone"
else
	fail "${pfx}migrate-destination" "exit $end_rc: $(tail_of "$logs/${pfx}mig-dst.log")"
fi
