# Issue #21 side by side: what QEMU 11.1 (Debian sid), run by its own
# libvirt, does when asked to move a guest that has lost a page. Since QEMU
# 9.0 a guest with any poisoned page cannot be migrated or saved ("Can't
# migrate this vm with hardware poisoned memory, please reboot the vm and
# try again"); hwlab-vmm's --snapshot and --migrate-to (the evacuate and
# migrate scenarios) move such a guest. This records the refusal as
# libvirt's users meet it: libvirt's own save and the error text it gives.
#
# The guest is compare's: our bzImage and the inner initramfs, booted by
# sid's libvirt (embedded driver) through hwpoison-guest's watch
# (_compare_qemu.sh's start_qemu), its target's page 2 poisoned through the
# watch (qemu_poison) with late kill: the target touches it, QEMU gets its
# SIGBUS and injects, the inner kernel says "Memory failure: ...:
# Recovered". Two boots of the same domain:
#   1. a throwaway boot: libvirt saves the healthy guest (it must work, so
#      that the refusal afterwards is the poison's). A completed save ends
#      the domain, as virsh save does; nothing restores it.
#   2. the healthy guest is live-migrated once (it must work too); then one
#      page is poisoned; then libvirt is asked to save it and QEMU to
#      live-migrate it, each refused, and the guest must run on.
#
# How the guest is asked to move:
#   save     through libvirt's API: the watch's "save FILE" request calls
#            virDomainSave(dom, FILE), what "virsh save" does (libvirt
#            pauses the guest, creates FILE with its header, has QEMU
#            migrate into it through libvirt_iohelper, and ends the domain;
#            when that fails it removes FILE and resumes the guest). The
#            watch answers one "save" line: ok, or refused with libvirt's
#            message (virGetLastErrorMessage), and the domain's state after.
#            (The embedded driver locks its root, so only the watch, which
#            runs the domain, can ask libvirt anything; the image has no
#            virsh.)
#   migrate  a live migration (the vCPUs run during the copy) with file:PATH
#            as its destination, sent to QEMU as QMP over a second monitor
#            that libvirt itself puts on QEMU's command line
#            (qemu:commandline, a pipe chardev /tmp/hwlab-qmp.in/.out;
#            libvirt marks the domain tainted custom-argv) while libvirt
#            keeps its own monitor and reports the guest's state changes
#            (the watch's domain_lifecycle lines). libvirt has no live
#            migration but to another libvirt: a second, local destination
#            is not to be had: the outer kernel has no INET (no tcp:), QEMU
#            may not fork (libvirt's -sandbox spawn=deny: no exec:, and
#            sid's chroot has no shell), a libvirt process opens one
#            embedded root only, and no process here could accept a unix:
#            stream as a QEMU would. QEMU checks for poisoned memory before
#            it opens any channel (migrate_prepare), so the destination
#            does not change the answer.
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
# (both boots' QEMUs open the FIFOs read-write, so neither blocks on them;
# the second boot's are read, from qmp_open on)
rm -f $QMP.in $QMP.out qmp.raw
mkfifo $QMP.in $QMP.out
: >qmp.raw
qmp_cat=
# qmp_open : read the monitor of the QEMU about to start. cat's open
# returns when QEMU starts and cat ends when QEMU does; fd 5 keeps QEMU's
# input open, so a request never blocks, whether QEMU is there or not
qmp_open() {
	cat $QMP.out >qmp.raw &
	qmp_cat=$!
	exec 5<>$QMP.in
}
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

# --- libvirt's save, through the watch ----------------------------------------
# lv_save FILE : ask the watch to save the domain into FILE (virDomainSave,
# as virsh save does) and wait for its answer (bounded 300 s: a save under
# nested TCG); sv_line is the watch's save line, sv_status ok or refused
# (empty when none came), sv_error libvirt's message (its newlines as
# spaces), sv_after the domain's state after it, in libvirt's words (gone:
# libvirt ended the transient domain, as a completed save does)
lv_save() {
	echo "save $1" >&3
	WL_BOUND=$(bound 3000) wait_lv "$lv" '"event":"save"' "\"path\":\"$1\""
	sv_line=$(json_line "$lv" '"event":"save"' "\"path\":\"$1\"")
	echo "  watch: save $1: ${sv_line:-no answer}"
	sv_status="" sv_error="" sv_after=""
	[ -n "$sv_line" ] || return 0
	sv_status=$(report_value "$sv_line" status)
	sv_after=$(report_value "$sv_line" state_after)
	if [ "$sv_status" != ok ]; then
		sv_error=$(report_value "$sv_line" error | tr '\n' ' ' | sed 's/ *$//')
	fi
}
# save_magic FILE : the first 16 bytes of FILE (libvirt's save images begin
# with LibvirtQemudSave, LibvirtQemudPart while incomplete)
save_magic() { head -c 16 "$1" 2>/dev/null | tr -dc 'A-Za-z'; }
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
rounds() { grep -c "$REC"'INNER-ROUND tag=target' mp.con; }
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

# late kill: the target's touch is the AR (QEMU asks for early kill of
# itself, so an AO may come first); the target replaces the lost page and
# goes on (on_sigbus=recover), so the guest has work to run on with
echo 0 >/proc/sys/vm/memory_failure_early_kill
# a watch (and with it the domain) lives at most this long
VMM_TIMEOUT=$(bound 1000)
guest_args="hwlab_inner.pages=8 hwlab_inner.on_sigbus=recover"

# --- boot 1: libvirt saves the healthy guest ------------------------------------
echo "=== a throwaway boot: libvirt saves the healthy guest (virDomainSave)"
if ! start_qemu mp-fresh.con "$guest_args"; then
	check migrate-peer-started "libvirt started $vmm and the guest booted${noboot:+ (noboot: $noboot)}" false
	stop_qemu
	finish
fi
mark=$(grep -c . "$lv")
lv_save /tmp/mp-fresh-save.img
fresh_save_status=$sv_status fresh_save_after=$sv_after fresh_save_error=$sv_error
fresh_save_bytes=$(wc -c </tmp/mp-fresh-save.img 2>/dev/null || echo 0)
fresh_save_magic=$(save_magic /tmp/mp-fresh-save.img)
echo "  the image: $fresh_save_bytes bytes, magic '$fresh_save_magic'${fresh_save_error:+; libvirt: $fresh_save_error}"
check fresh-save "libvirt saved the healthy guest: save line ok, $fresh_save_bytes bytes at /tmp/mp-fresh-save.img with libvirt's header ($fresh_save_magic)" \
	test "$fresh_save_status" = ok -a "$fresh_save_bytes" -gt 0 -a "$fresh_save_magic" = LibvirtQemudSave
# a completed save ends the domain (stopped, detail 4: saved); the watch
# ends with it, by itself
fs_n=0
while kill -0 "$watch_pid" 2>/dev/null && [ $fs_n -lt "$(bound 300)" ]; do
	sleep 0.1
	fs_n=$((fs_n + 1))
done
fresh_watch_rc=running
kill -0 "$watch_pid" 2>/dev/null || { wait "$watch_pid"; fresh_watch_rc=$?; }
fresh_life=$(lifecycle_since "$mark")
sed 's/^/  watch: /' "$lv"
sed 's/^/  watch(stderr): /' "$lv.err" | grep -v ' info : \| warning : '
# (its ending as libvirt ends a saved domain: true or false, for check.
# libvirt 12.8 says suspended, shutdown (detail 2: at the host's request)
# and stopped; the boot's own started and resumed may come first, when
# libvirt's event loop delivered them late)
fresh_save_ended() {
	case $fresh_life in *'suspended '*'stopped ') ;; *) return 1 ;; esac
	json_line "$lv" '"lifecycle":"stopped"' '"detail":4,' >/dev/null || return 1
	case $fresh_save_after in gone | shutoff) ;; *) return 1 ;; esac
	! kill -0 "$vmm_pid" 2>/dev/null && [ "$fresh_watch_rc" = 0 ]
}
check fresh-save-ended "libvirt ended the saved domain (domain_lifecycle since the request: '$fresh_life': suspended, then stopped with detail 4, saved; state after '$fresh_save_after'), QEMU gone, the watch ended by itself (status $fresh_watch_rc)" \
	fresh_save_ended
grep -iE 'migrat|save|iohelper|shutting down' "$qemu_log" | sed "s/^/  $vmm(log): /"
stop_qemu
rm -f /tmp/mp-fresh-save.img
fresh_save=failed
[ "$fresh_save_status" = ok ] && fresh_save=ok

# --- boot 2: the guest that loses a page ------------------------------------------
echo "=== the guest that will lose a page: a second boot, with the second monitor read"
qmp_open
if ! start_qemu mp.con "$guest_args"; then
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

# --- before the poison: a live migration works ------------------------------------
echo "=== before the poison: live migration of the healthy guest (QMP)"
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
check fresh-runs-on "after it, the guest runs on in $vmm" test $? -eq 0
fresh_migrate=failed
[ "$fresh_live_status" = completed ] && fresh_migrate=ok

# --- one page lost and recovered ------------------------------------------------
echo "=== one poisoned page: late kill, QEMU injects, the guest recovers"
hc_before=$(hardware_corrupted_kb)
gpa=$(page_field mp.con 2 gpa)
pfn=$(printf '%#x' $((gpa >> 12)))
qemu_poison "$gpa"
wait_outcome mp.con "$pfn"
wait_lv "$lv" '"event":"memory_failure"' '"recipient":"guest"' '"action":"inject"'
wait_console mp.con "INNER-SIGBUS tag=target .* idx=2\$"
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
	       grep -q '${REC}INNER-SIGBUS tag=target .* idx=2\$' mp.con && ! grep -q 'Kernel panic' mp.con"

# --- after the poison: both refused ---------------------------------------------
echo "=== after the poison: libvirt's save, and a live migration, again"
mark=$(grep -c . "$lv")
rm -f /tmp/mp-poisoned-save.img
lv_save /tmp/mp-poisoned-save.img
save_status=$sv_status save_error=$sv_error save_after=$sv_after
save_written=no
[ -e /tmp/mp-poisoned-save.img ] && save_written=yes
echo "  libvirt's refusal (save): $save_error"
check save-refused "libvirt refused the save of the poisoned guest (virDomainSave, status $save_status): '$save_error'" \
	sh -c "[ \"\$2\" = refused ] || exit 1; case \"\$1\" in *'$phrase'*) exit 0 ;; esac; exit 1" - "$save_error" "$save_status"
check save-no-image "the refused save left no image: libvirt removed the file it had created (none at /tmp/mp-poisoned-save.img)" \
	test $save_written = no
save_life=no
wait_lifecycle "$mark" "suspended resumed " && save_life=yes
check save-resumed-libvirt "libvirt resumed the guest after the refusal: state after '$save_after', domain_lifecycle since the request '$(lifecycle_since "$mark")' (suspended, resumed)" \
	test "$save_after" = running -a $save_life = yes
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
sed 's/^/  watch(stderr): /' "$lv.err" | grep -v ' info : \| warning : '

save=accepted migrate=accepted
case $save_status:$save_error in refused:*"$phrase"*) save=refused ;; ok:*) ;; :) save=none ;; *) save=error ;; esac
case $live_error in *"$phrase"*) migrate=refused ;; '') ;; *) migrate=error ;; esac
qemu_state
# (a MEASURE value is one double-quoted word: libvirt's and QEMU's texts without theirs)
echo "HWLAB-MEASURE migrate-peer $versions poisoned_pages=1 fresh_save=$fresh_save fresh_migrate=$fresh_migrate" \
	"save=$save migrate=$migrate state_after=${qstate:-gone} save_state_after=${save_after:-none}" \
	"save_via=libvirt-virDomainSave" \
	"migrate_via=qmp-monitor reason=\"$(printf '%s' "$save_error" | tr '"' "'")\"" \
	"migrate_reason=\"$(printf '%s' "$live_error" | tr '"' "'")\""
sed -n 's/.*starting up \(libvirt version: .*\)/  \1/p' $qemu_log
kill "$qmp_cat" 2>/dev/null
exec 5>&-
stop_qemu
finish
