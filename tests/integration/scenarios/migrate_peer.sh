# Issue #21 side by side: what QEMU 11.1 (Debian sid), run by its own
# libvirt, does when asked to move a guest that has lost a page. Since QEMU
# 9.0 a guest with any poisoned page cannot be migrated or saved ("Can't
# migrate this vm with hardware poisoned memory, please reboot the vm and
# try again"); hwlab-vmm's --snapshot and --migrate-to (the evacuate and
# migrate scenarios) move such a guest. This records QEMU's refusal.
#
# The guest is compare's: our bzImage and the inner initramfs, booted by
# sid's libvirt (embedded driver) through hwpoison-guest's watch
# (_compare_qemu.sh's start_qemu), its target's page 2 poisoned through the
# watch (qemu_poison) with late kill: the target touches it, QEMU gets its
# SIGBUS and injects, the inner kernel says "Memory failure: ...:
# Recovered". Before that, the same guest is saved and live-migrated once
# (both must work, so that the refusal afterwards is the poison's); after
# it, both again, each refused, and the guest must run on.
#
# How the guest is asked to move. The outer VM has no libvirt client that
# can save or migrate: no virsh in the image (sid's chroot carries QEMU,
# libvirt0, its QEMU driver and hwpoison-guest, whose watch takes only
# "poison GPA" and "quit"), and the embedded driver locks its root, so no
# second process may open it while the watch runs the domain. So the two
# requests go to QEMU as libvirt would send them, over a second QMP monitor
# that libvirt itself puts on QEMU's command line (qemu:commandline, a pipe
# chardev /tmp/hwlab-qmp.in/.out; libvirt marks the domain tainted
# custom-argv) while libvirt keeps its own monitor and reports the guest's
# state changes (the watch's domain_lifecycle lines):
#   save     what "virsh save" does: stop the vCPUs, migrate the guest into
#            a file (libvirt: QMP migrate to fd:, a file it opened; here
#            file:PATH, QEMU's own), and resume the guest when that failed
#            (libvirt resumes a guest whose save failed; a completed save
#            is resumed here too, where libvirt would end the domain)
#   migrate  a live migration (the vCPUs run during the copy) with file:PATH
#            as its destination. A second, local destination is not to be
#            had: the outer kernel has no INET (no tcp:), QEMU may not fork
#            (libvirt's -sandbox spawn=deny: no exec:, and sid's chroot has
#            no shell), a libvirt process opens one embedded root only, and
#            no process here could accept a unix: stream as a QEMU would.
#            QEMU checks for poisoned memory before it opens any channel
#            (migrate_prepare), so the destination does not change the answer.
# Run alone: tests/run.sh migrate_peer (compare image, 2G).
. /hwlab/scenarios/_lib.sh
# a request to a watch that died fails its write (EPIPE), not this script
trap '' PIPE
QEMU=/usr/bin/qemu-system-x86_64
LIBVIRT_CONF=/hwlab/lib/libvirt-qemu.conf
. /hwlab/lib/libvirt_embed.sh
. /hwlab/scenarios/_compare_qemu.sh
. /hwlab/scenarios/_compare_measure.sh

if ! peer_ready sid; then
	skip migrate-peer "$peer_reason"
	finish
fi
use_qemu sid
guest=bzImage gtag=ours
LINUX_KERNEL=/hwlab/data/bzImage
versions="qemu=$(peer_version sid qemu-system-x86) libvirt=$(peer_version sid libvirt0)"
echo "  $vmm (Debian sid): $versions driver=embed"
phrase='hardware poisoned memory'

# --- the second QMP monitor ---------------------------------------------------
QMP=/tmp/hwlab-qmp
qemu_xml_extra="
  <qemu:commandline xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'>
    <qemu:arg value='-chardev'/>
    <qemu:arg value='pipe,id=hwlabqmp,path=$QMP'/>
    <qemu:arg value='-object'/>
    <qemu:arg value='monitor-qmp,id=hwlabmon,chardev=hwlabqmp'/>
  </qemu:commandline>"
rm -f $QMP.in $QMP.out qmp.raw
mkfifo $QMP.in $QMP.out
: >qmp.raw
# QEMU opens both FIFOs read-write: cat's open returns when QEMU starts and
# cat ends when QEMU does; fd 5 keeps QEMU's input open, so a request
# never blocks, whether QEMU is there or not
cat $QMP.out >qmp.raw &
qmp_cat=$!
exec 5<>$QMP.in
qmp_n=0
# qmp_line ERE : the first line QEMU wrote on this monitor that matches
qmp_line() { tr -d '\r' <qmp.raw | grep -E -- "$1" | head -n 1 | grep .; }
# qmp COMMAND [ARGUMENTS] : one request; its answer (the line with its id)
# in qmp_reply, empty when none came within 60 s or QEMU ended
qmp() {
	qmp_n=$((qmp_n + 1))
	q_id=mp$qmp_n
	if [ -n "${2:-}" ]; then q_args=",\"arguments\":$2"; else q_args=; fi
	printf '{"execute":"%s"%s,"id":"%s"}\n' "$1" "$q_args" "$q_id" >&5
	q_n=0
	while ! qmp_line "\"id\": *\"$q_id\"" >/dev/null && kill -0 "$vmm_pid" 2>/dev/null &&
		[ $q_n -lt "$(bound 600)" ]; do
		sleep 0.1
		q_n=$((q_n + 1))
	done
	qmp_reply=$(qmp_line "\"id\": *\"$q_id\"")
}
# qmp_get MEMBER [FIELD] : the answer's MEMBER (return, error), or a FIELD
# of that object (return status, error desc)
qmp_get() {
	if [ -n "${2:-}" ]; then
		printf '%s\n' "$qmp_reply" | json-field - "$1" 2>/dev/null | json-field - "$2" 2>/dev/null
	else
		printf '%s\n' "$qmp_reply" | json-field - "$1" 2>/dev/null
	fi
}
# qemu_state : QEMU's run state (query-status) in qstate. (qmp counts its
# requests in this shell: never in a $(...) subshell, which would reuse an id)
qemu_state() {
	qmp query-status
	qstate=$(qmp_get return status)
}
# migrate_to FILE : QMP migrate to file:FILE; sets mig_error, QEMU's refusal
# (empty when it took the request), and mig_status, where the migration
# ended (query-migrate until completed, failed or cancelled; bounded 300 s)
migrate_to() {
	rm -f "$1"
	qmp migrate "{\"uri\":\"file:$1\"}"
	echo "  qmp migrate file:$1: $qmp_reply"
	mig_error=$(qmp_get error desc)
	mig_status=
	[ -n "$qmp_reply" ] && [ -z "$mig_error" ] || return 0
	mt_n=0
	while qmp query-migrate; do
		mig_status=$(qmp_get return status)
		case $mig_status in completed | failed | cancelled) break ;; esac
		[ $mt_n -lt "$(bound 300)" ] && kill -0 "$vmm_pid" 2>/dev/null || break
		sleep 1
		mt_n=$((mt_n + 1))
	done
	echo "  query-migrate: $mig_status$([ -f "$1" ] && echo ", $(wc -c <"$1") bytes in $1")"
}
# lifecycle_since N : the watch's domain_lifecycle words after its first N
# lines (libvirt's view of the guest's state: suspended, resumed, stopped)
lifecycle_since() {
	sed -n "$(($1 + 1)),\$p" "$lv" | grep '"event":"domain_lifecycle"' |
		while IFS= read -r ls_l; do printf '%s\n' "$ls_l" | json-field - lifecycle; done | tr '\n' ' '
}
# wait_lifecycle N WORDS : until lifecycle_since N says WORDS (bounded 30 s:
# libvirt's event loop delivers them after QEMU's events)
wait_lifecycle() {
	wl_n=0
	while [ "$(lifecycle_since "$1")" != "$2" ] && [ $wl_n -lt "$(bound 300)" ]; do
		sleep 0.1
		wl_n=$((wl_n + 1))
	done
	[ "$(lifecycle_since "$1")" = "$2" ]
}
# rounds : how many INNER-ROUND lines the target printed (one every 2 s)
rounds() { grep -c 'INNER-ROUND tag=target' mp.con; }
# runs_on WHAT : QEMU and the watch alive, QEMU running the guest, the
# target printing its rounds: true, or false with the reason on the console
# (not inside check, which drops what its command prints)
runs_on() {
	qemu_state
	ro_state=$qstate
	ro_r=$(rounds)
	if ! kill -0 "$vmm_pid" 2>/dev/null || ! kill -0 "$watch_pid" 2>/dev/null; then
		echo "  $1: QEMU (pid $vmm_pid) or the watch ended"
		return 1
	fi
	if [ "$ro_state" != running ]; then
		echo "  $1: QEMU's state is '$ro_state'"
		return 1
	fi
	if ! wait_console mp.con 'INNER-ROUND tag=target' $((ro_r + 1)); then
		echo "  $1: the target printed no round after $ro_r"
		return 1
	fi
	echo "  $1: QEMU running, the target's round $((ro_r + 1)) printed"
}

# --- the guest ------------------------------------------------------------------
# late kill: the target's touch is the AR (QEMU asks for early kill of
# itself, so an AO may come first); the target replaces the lost page and
# goes on (on_sigbus=recover), so the guest has work to run on with
echo 0 >/proc/sys/vm/memory_failure_early_kill
# the watch (and with it the domain) lives for the whole scenario
VMM_TIMEOUT=$(bound 1000)
if ! start_qemu mp.con "hwlab_inner.pages=8 hwlab_inner.on_sigbus=recover"; then
	check migrate-peer-started "libvirt started $vmm and the guest booted${noboot:+ (noboot: $noboot)}" false
	kill "$qmp_cat" 2>/dev/null
	stop_qemu
	finish
fi
grep -E 'hwlabqmp|hwlabmon|tainted' $qemu_log | sed "s/^/  $vmm(log): /"
n=0
while ! qmp_line '"QMP"' >/dev/null && [ $n -lt "$(bound 600)" ]; do
	sleep 0.1
	n=$((n + 1))
done
qmp qmp_capabilities
check qmp-monitor "libvirt gave $vmm the second QMP monitor (pipe $QMP): greeting and qmp_capabilities answered" \
	sh -c "tr -d '\r' <qmp.raw | grep -q '\"QMP\": {\"version\"' && [ '$(qmp_get return)' = '{}' ]"

# --- before the poison: both work -----------------------------------------------
echo "=== before the poison: save and live migration of the healthy guest"
mark=$(grep -c . "$lv")
qmp stop
migrate_to /tmp/mp-fresh-save.img
fresh_save_error=$mig_error fresh_save_status=$mig_status
fresh_save_bytes=$(wc -c </tmp/mp-fresh-save.img 2>/dev/null || echo 0)
qmp cont
check fresh-save "the healthy guest saved: stop, migrate to a file, completed ($fresh_save_bytes bytes), resumed" \
	test -z "$fresh_save_error" -a "$fresh_save_status" = completed -a "$fresh_save_bytes" -gt 0
check fresh-save-libvirt "libvirt saw the save's pause and resume (domain_lifecycle: suspended, resumed)" \
	wait_lifecycle "$mark" "suspended resumed "
rm -f /tmp/mp-fresh-save.img
mark=$(grep -c . "$lv")
migrate_to /tmp/mp-fresh-live.img
fresh_live_error=$mig_error fresh_live_status=$mig_status
fresh_live_bytes=$(wc -c </tmp/mp-fresh-live.img 2>/dev/null || echo 0)
# a completed migration leaves the source stopped (postmigrate)
qemu_state
fresh_live_after=$qstate
qmp cont
check fresh-migrate "the healthy guest live-migrated to a file: completed ($fresh_live_bytes bytes), source left $fresh_live_after, resumed" \
	test -z "$fresh_live_error" -a "$fresh_live_status" = completed -a "$fresh_live_bytes" -gt 0 -a "$fresh_live_after" = postmigrate
check fresh-migrate-libvirt "libvirt saw the migration's stop and the resume (domain_lifecycle: suspended, resumed)" \
	wait_lifecycle "$mark" "suspended resumed "
rm -f /tmp/mp-fresh-live.img
runs_on "healthy guest"
check fresh-runs-on "after both, the guest runs on in $vmm" test $? -eq 0
fresh_save=failed fresh_migrate=failed
[ "$fresh_save_status" = completed ] && fresh_save=ok
[ "$fresh_live_status" = completed ] && fresh_migrate=ok

# --- one page lost and recovered ------------------------------------------------
echo "=== one poisoned page: late kill, QEMU injects, the guest recovers"
hc_before=$(hardware_corrupted_kb)
gpa=$(page_field mp.con 2 gpa)
pfn=$(printf '%#x' $((gpa >> 12)))
qemu_poison "$gpa"
wait_outcome mp.con "$pfn"
wait_lv "$lv" '"event":"memory_failure"' '"recipient":"guest"' '"action":"inject"'
wait_console mp.con "INNER-SIGBUS tag=target .* idx=2\(\$\|\[\)"
echo "  $vmm: $out"
qemu_show mp.con
echo "  outer HardwareCorrupted: $hc_before kB -> $(hardware_corrupted_kb) kB"
check poison-written "hwpoison-guest found $vmm's page for GPA $gpa through libvirt and wrote corrupt-pfn" \
	json_line "$lv" '"event":"poison_done"' "\"gpa\":\"$gpa\"" '"status":0'
check poison-injected "$vmm injected the machine check into its guest (MEMORY_FAILURE recipient guest, action inject; its stderr names GPA $gpa)" \
	sh -c "grep -q '\"recipient\":\"guest\",\"action\":\"inject\"' $lv &&
	       grep -q 'Guest MCE Memory Error .*GUEST addr $gpa of type' $qemu_log"
check poison-recovered "the inner kernel recovered $pfn, the target got its SIGBUS and replaced the page, no panic" \
	sh -c "grep -q 'Memory failure: $pfn: recovery action for .*: Recovered' mp.con &&
	       grep -q 'INNER-SIGBUS tag=target .* idx=2' mp.con && ! grep -q 'Kernel panic' mp.con"

# --- after the poison: both refused ---------------------------------------------
echo "=== after the poison: save and live migration again"
mark=$(grep -c . "$lv")
qmp stop
migrate_to /tmp/mp-poisoned-save.img
save_error=$mig_error save_status=$mig_status
save_written=no
[ -e /tmp/mp-poisoned-save.img ] && save_written=yes
# as libvirt does when a save failed: the guest goes on
qmp cont
echo "  QEMU's refusal (save): $save_error"
check save-refused "$vmm refused the save: '$save_error'" \
	sh -c "case \"\$1\" in *'$phrase'*) exit 0 ;; esac; exit 1" - "$save_error"
check save-no-image "the refused save opened no image (QEMU refuses before any channel): none at /tmp/mp-poisoned-save.img" \
	test $save_written = no
check save-resumed-libvirt "libvirt saw the save's pause and the resume after the refusal (domain_lifecycle: suspended, resumed)" \
	wait_lifecycle "$mark" "suspended resumed "
mark=$(grep -c . "$lv")
migrate_to /tmp/mp-poisoned-live.img
live_error=$mig_error live_status=$mig_status
live_written=no
[ -e /tmp/mp-poisoned-live.img ] && live_written=yes
echo "  QEMU's refusal (migrate): $live_error"
check migrate-refused "$vmm refused the live migration: '$live_error'" \
	sh -c "case \"\$1\" in *'$phrase'*) exit 0 ;; esac; exit 1" - "$live_error"
check migrate-no-image "the refused migration opened no destination: none at /tmp/mp-poisoned-live.img" \
	test $live_written = no
qmp query-migrate
echo "  query-migrate after the refusals: $qmp_reply"
runs_on "poisoned guest"
check poisoned-runs-on "after both refusals the guest runs on in $vmm (QEMU and the watch alive, state running)" test $? -eq 0
# the live request never paused the guest: libvirt saw no state change
# since it (read after runs_on, which waited for the target's next round:
# libvirt had that long to deliver a STOP that QEMU sent before its answer)
live_life=$(lifecycle_since "$mark")
check migrate-no-pause "libvirt saw no state change from the refused live migration (domain_lifecycle since: '${live_life}')" \
	test -z "$live_life"
tr -d '\r' <qmp.raw | sed 's/^/  qmp: /'
# (QEMU answers on the monitor alone: its stderr says nothing of a refusal)
grep -iE 'qemu-system-x86_64: .*(migrat|poison)' $qemu_log | sed "s/^/  $vmm(stderr): /"

save=accepted migrate=accepted
case $save_error in *"$phrase"*) save=refused ;; '') ;; *) save=error ;; esac
case $live_error in *"$phrase"*) migrate=refused ;; '') ;; *) migrate=error ;; esac
qemu_state
extra=
[ "$live_error" = "$save_error" ] || extra=" migrate_reason=\"$live_error\""
echo "HWLAB-MEASURE migrate-peer $versions poisoned_pages=1 fresh_save=$fresh_save fresh_migrate=$fresh_migrate" \
	"save=$save migrate=$migrate state_after=${qstate:-gone} via=qmp-monitor reason=\"$save_error\"$extra"
sed -n 's/.*starting up \(libvirt version: .*\)/  \1/p' $qemu_log
kill "$qmp_cat" 2>/dev/null
exec 5>&-
stop_qemu
finish
