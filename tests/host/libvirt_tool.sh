#!/usr/bin/env bash
# hwpoison-guest --watch/--domain against a QEMU that libvirt runs, on this
# host: the embedded driver (qemu:///embed, no daemon) starts a TCG domain
# that boots our bzImage (its firmware copies the kernel to 1 MiB, so that
# page becomes present and QEMU's own). The pid and the GPA -> HVA come
# through libvirt (query-cpus-fast, gpa2hva), the PFN from pagemap, and it
# is written to a fake debugfs: a plain file, so nothing on this host is
# poisoned. QEMU's memory-failure events need a real poison: the compare
# scenario hears them inside the outer VM.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/tests/lib/check.sh"
LIBVIRT_CONF=$here/outer-qemu/libvirt-qemu.conf
. "$here/tests/lib/libvirt_embed.sh"
tool=$here/build/hwpoison-guest
json_field=$here/build/json-field
pagemap_pfn=$here/build/pagemap-pfn
qemu=${QEMU:-qemu-system-x86_64}

if [ "$(id -u)" -ne 0 ]; then
	skip libvirt-tool "not root: the tool reads PFNs from pagemap only as root"
	finish
fi
if ! command -v "$qemu" >/dev/null || ! ls /usr/lib/*/libvirt/connection-driver/libvirt_driver_qemu.so \
	>/dev/null 2>&1; then
	skip libvirt-tool "no $qemu or no libvirt QEMU driver (make deps installs qemu-system-x86, libvirt-daemon-driver-qemu)"
	finish
fi
t=$(mktemp -d)
if [ "${1:-}" != --in-namespace ] && embed_needs_user; then
	# a private mount namespace: /etc/passwd with a libvirt-qemu user for
	# this test alone, nothing changed on the host
	if unshare -m true 2>/dev/null; then
		rm -rf "$t"
		exec unshare -m "$0" --in-namespace
	fi
	skip libvirt-tool "no libvirt-qemu user, and no mount namespace to add one in (unshare -m failed)"
	finish
fi
if [ "${1:-}" = --in-namespace ]; then
	{ cat /etc/passwd; echo 'libvirt-qemu:x:64055:64055:libvirt qemu:/nonexistent:/usr/sbin/nologin'; } >"$t/passwd"
	{ cat /etc/group; echo 'libvirt-qemu:x:64055:'; } >"$t/group"
	mount --bind "$t/passwd" /etc/passwd && mount --bind "$t/group" /etc/group ||
		{ skip libvirt-tool "cannot bind-mount a passwd file in the mount namespace"; finish; }
fi
trap 'exec 3>&- 2>/dev/null; [ -n "${wpid:-}" ] && kill $wpid 2>/dev/null; wait 2>/dev/null; rm -rf "$t"' EXIT
embed_root_init "$t/root"
uri=$(embed_uri "$t/root")
mkdir -p "$t/debugfs/hwpoison"
: >"$t/debugfs/hwpoison/corrupt-pfn"
cat >"$t/dom.xml" <<EOF
<domain type='qemu'>
  <name>hwlab-host</name>
  <memory unit='MiB'>64</memory>
  <vcpu>1</vcpu>
  <os><type arch='x86_64' machine='pc'>hvm</type><kernel>$here/build/bzImage</kernel></os>
  <on_crash>destroy</on_crash>
  <devices><emulator>$(command -v "$qemu")</emulator><memballoon model='none'/></devices>
</domain>
EOF

# wait_line PATTERN [N [FILE]] : until N (1) lines of the watch's output
# (FILE, default watch.out) hold it (bounded by the watch's life and 120 s)
wait_line() {
	local n=0 want=${2:-1} f=${3:-$t/watch.out}
	while [ "$(grep -c -- "$1" "$f")" -lt "$want" ] && kill -0 $wpid 2>/dev/null &&
		[ $n -lt 1200 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	[ "$(grep -c -- "$1" "$f")" -ge "$want" ]
}
# the watch reads its requests from a FIFO that this script holds open
mkfifo "$t/req"
"$tool" --connect "$uri" --watch --domain hwlab-host --start "$t/dom.xml" \
	--debugfs "$t/debugfs" --wait-present 120 <"$t/req" >"$t/watch.out" 2>"$t/watch.err" &
wpid=$!
exec 3>"$t/req"
wait_line '"event":"watch_ready"'
sed 's/^/  watch: /' "$t/watch.out"
qpid=$("$json_field" "$t/watch.out" pid event=domain_started)
check lv-started "libvirt started the domain; the watch names its QEMU (pid ${qpid:-none}) from query-cpus-fast" \
	sh -c "[ -n '$qpid' ] && [ \"\$(basename \"\$(readlink /proc/$qpid/exe)\")\" = qemu-system-x86_64 ]"

echo "poison 0x100000" >&3
wait_line '"event":"poison_done","gpa":"0x100000"'
out=$(grep '"event":"poison",' "$t/watch.out")
echo "  watch: $out"
check lv-poison "through libvirt, QEMU's GPA 0x100000 (its copy of our kernel) is poisoned, status 0" \
	sh -c "printf '%s' '$out' | grep -q '\"pid\":$qpid,\"gpa\":\"0x100000\"' &&
		grep -q '\"event\":\"poison_done\",\"gpa\":\"0x100000\",\"status\":0' '$t/watch.out'"
hva=$("$json_field" - hva event=poison <<<"$out")
pfn=$("$json_field" - pfn event=poison <<<"$out")
# the PFN, read independently of the tool
want=$([ -n "$hva" ] && "$pagemap_pfn" $qpid "$hva" 2>&1)
check lv-pfn "the PFN written ($(cat "$t/debugfs/hwpoison/corrupt-pfn")) is pagemap's for QEMU's hva $hva ($want)" \
	sh -c "[ -n '$pfn' ] && [ '$pfn' = '$want' ] && [ \$((\$(cat '$t/debugfs/hwpoison/corrupt-pfn'))) -eq \$(($want)) ]"
: >"$t/debugfs/hwpoison/corrupt-pfn"

echo "poison 0xfee00000" >&3
wait_line '"event":"poison_done","gpa":"0xfee00000"'
check lv-not-ram "a GPA that is not RAM is refused (status 1, libvirt's gpa2hva answer quoted), the watch goes on" \
	sh -c "grep -q '\"gpa\":\"0xfee00000\",\"status\":1' '$t/watch.out' &&
		grep -q 'has no RAM at GPA 0xfee00000' '$t/watch.err' && kill -0 $wpid"
echo "poison banana" >&3
# save requests whose FILE is refused before libvirt sees it
echo "save bad-relative.img" >&3
printf 'save %s/cr\rbad.img\n' "$t" >&3
echo "save" >&3
# the command line's number rule: 0612000 is refused, not poisoned as octal
# (GPA 0x31400, another page); a request echoed in a refusal is escaped
echo "poison 0612000" >&3
printf 'poison \033[2J\n' >&3
echo "poison 0x100000" >&3
wait_line '"event":"poison_done","gpa":"0x100000","status":0' 2
check lv-bad-request "a malformed request is refused on stderr, and the next one is served" \
	grep -q "ignoring 'poison banana'" "$t/watch.err"
check lv-save-bad-request "a save of a relative FILE, of one with a carriage return, or of none is refused on stderr, nothing saved, no save line" \
	sh -c "grep -q \"ignoring 'save bad-relative.img': FILE must be an absolute path\" '$t/watch.err' &&
		grep -q 'FILE has a control character' '$t/watch.err' &&
		grep -q \"ignoring 'save': save needs a file\" '$t/watch.err' &&
		! grep -q '\"event\":\"save\"' '$t/watch.out' && ! ls '$t'/*.img >/dev/null 2>&1 &&
		kill -0 $qpid"
check lv-octal-request "'poison 0612000' is refused as the command line refuses it, nothing poisoned at 0x31400" \
	sh -c "grep -q \"ignoring 'poison 0612000': the GPA is not a number\" '$t/watch.err' &&
		! grep -q '\"gpa\":\"0x31400\"' '$t/watch.out'"
check lv-request-escaped "a refused request reaches stderr escaped: no ESC byte" \
	sh -c "grep -qF \"ignoring 'poison \\x1b[2J'\" '$t/watch.err' && ! grep -q \"\$(printf '\\033')\" '$t/watch.err'"
: >"$t/debugfs/hwpoison/corrupt-pfn"
echo quit >&3
exec 3>&-
wait $wpid
wrc=$?
wpid=
check lv-quit "on quit the watch destroys the domain it started and exits 2 (a request was malformed; got $wrc)" \
	sh -c "[ $wrc -eq 2 ] && ! kill -0 $qpid 2>/dev/null"
check lv-lifecycle "the watch reported the domain's start and stop" \
	sh -c "grep -q '\"lifecycle\":\"started\"' '$t/watch.out' && grep -q '\"lifecycle\":\"stopped\"' '$t/watch.out'"
sed 's/^/  watch(stderr): /' "$t/watch.err" | grep -v ' info : \| warning : '

# "save FILE": virDomainSave, what virsh save does, on a second boot of the
# domain. libvirt pauses the guest, creates FILE and has QEMU migrate into
# it through libvirt_iohelper (libvirt-daemon's); it resumes the guest when
# that failed, and ends the domain when it completed.
mkfifo "$t/save.req"
"$tool" --connect "$uri" --watch --domain hwlab-host --start "$t/dom.xml" \
	<"$t/save.req" >"$t/save.out" 2>"$t/save.err" &
wpid=$!
exec 3>"$t/save.req"
wait_line '"event":"watch_ready"' 1 "$t/save.out"
qpid=$("$json_field" "$t/save.out" pid event=domain_started)
echo "save $t/no-such-dir/dom.img" >&3
wait_line '"event":"save"' 1 "$t/save.out"
line=$(grep '"event":"save"' "$t/save.out")
echo "  watch: $line"
# field NAME : NAME of the save line in $line
field() { "$json_field" - "$1" <<<"$line"; }
check lv-save-refused "a save libvirt cannot do is refused with libvirt's message, the guest resumed, the watch goes on" \
	sh -c "[ '$(field status)' = refused ] && [ '$(field state_after)' = running ] &&
		kill -0 $wpid && kill -0 $qpid && [ \"\$1\" = \"\$2\" ]" - "$(field error)" \
	"Failed to create file '$t/no-such-dir/dom.img': No such file or directory"
# a FIFO as FILE: libvirt would open it in the watch, whose SIGTERM and
# SIGINT are blocked for its signalfd, and wait there for a reader for ever
# (issue #36); refused before libvirt sees it
mkfifo "$t/save.fifo"
echo "save $t/save.fifo" >&3
wait_line '"event":"save"' 2 "$t/save.out"
line=$(grep '"event":"save"' "$t/save.out" | sed -n 2p)
echo "  watch: $line"
check lv-save-fifo "a save FILE that is a FIFO is refused before libvirt opens it, the guest runs on, the watch goes on" \
	sh -c "[ '$(field status)' = refused ] && [ '$(field state_after)' = running ] && kill -0 $wpid"
iohelper=/usr/lib/libvirt/libvirt_iohelper
if [ -x $iohelper ]; then
	echo "save $t/dom.img" >&3
	wait_line '"event":"save"' 3 "$t/save.out"
	line=$(grep '"event":"save"' "$t/save.out" | tail -n 1)
	echo "  watch: $line"
	magic=$(head -c 16 "$t/dom.img" 2>/dev/null | tr -dc 'A-Za-z')
	after=$(field state_after)
	check lv-save "libvirt saved the domain: save line $(field status), $(wc -c <"$t/dom.img" 2>/dev/null || echo 0) bytes with libvirt's header ($magic), state after '$after'" \
		sh -c "[ '$(field status)' = ok ] && [ '$magic' = LibvirtQemudSave ] &&
			{ [ '$after' = gone ] || [ '$after' = shutoff ]; }"
	# the saved domain stopped: the watch ends by itself (status 1: the refused save)
	exec 3>&-
	n=0
	while kill -0 $wpid 2>/dev/null && [ $n -lt 300 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	wait $wpid
	wrc=$?
	wpid=
	check lv-save-stopped "a completed save ends the domain (stopped, detail 4: saved), its QEMU, and the watch (status 1 after the refused save; got $wrc)" \
		sh -c "grep -q '\"lifecycle\":\"stopped\",\"detail\":4,' '$t/save.out' && [ $wrc -eq 1 ] && ! kill -0 $qpid 2>/dev/null"
else
	skip lv-save "no $iohelper (libvirt-daemon): libvirt's QEMU driver writes a save through it"
	echo quit >&3
	exec 3>&-
	wait $wpid
	wpid=
fi
sed 's/^/  watch: /' "$t/save.out"
sed 's/^/  watch(stderr): /' "$t/save.err" | grep -v ' info : \| warning : '

# --start naming a FIFO: opened without waiting for a writer and refused
# (the stop signals are already blocked for the watch's signalfd)
mkfifo "$t/start.fifo"
expect lv-start-fifo 1 "cannot read domain XML $t/start.fifo: not a regular file" \
	timeout 30 "$tool" --connect "$uri" --watch --domain hwlab-host --start "$t/start.fifo" \
	--debugfs "$t/debugfs" </dev/null
expect lv-no-domain 1 'no domain nosuch' "$tool" --connect "$uri" --domain nosuch --debugfs "$t/debugfs" 0x100000
expect lv-bad-uri 1 'cannot connect to libvirt at bogus:///x' \
	"$tool" --connect bogus:///x --domain d --debugfs "$t/debugfs" 0x100000
# libvirt's test driver: a domain whose driver has no QEMU monitor
expect lv-no-monitor 1 "query-cpus-fast through libvirt: this function is not supported" \
	"$tool" --connect test:///default --domain test --debugfs "$t/debugfs" 0x100000
expect lv-watch-quit 0 '"event":"watch_ready"' \
	sh -c "echo quit | '$tool' --connect test:///default --watch --domain test"
expect lv-start-needs-domain 2 'usage' "$tool" --connect "$uri" --watch --start "$t/dom.xml"
expect lv-no-soak 2 'usage' "$tool" --domain d --soak 3 --log /dev/null 0x100000
expect lv-static 1 'built without libvirt' "$here/build/static/hwpoison-guest" --domain d 0x100000
check lv-nothing-written "no refused request wrote a PFN" test ! -s "$t/debugfs/hwpoison/corrupt-pfn"
finish
