# compare.sh's QEMUs, each driven through its own suite's libvirt: which
# QEMU and libvirt a suite has, the domain they run, starting and stopping
# it through hwpoison-guest's watch (the embedded driver, qemu:///embed),
# and poisoning its guest's page through the watch. Sourced by compare.sh.

# A QEMU is named by its suite: bookworm (the image's own), trixie, sid.
# vmm_name SUITE : qemu-MAJOR.MINOR, from the package version
vmm_name() {
	case $1 in
	bookworm) vn_v=$($QEMU --version | sed -n 's/^QEMU emulator version \([0-9]*\.[0-9]*\).*/\1/p') ;;
	*) vn_v=$(peer_version "$1" qemu-system-x86 | sed 's/^[0-9]*://; s/^\([0-9]*\.[0-9]*\).*/\1/') ;;
	esac
	echo "qemu-${vn_v:-$1}"
}
# use_qemu SUITE : what start_qemu runs: the watch (in the peer's chroot,
# or the image's own for bookworm), its libvirt's embedded root and QEMU's
# log there
use_qemu() {
	uq_suite=$1
	vmm=$(vmm_name "$1")
	lv_root=/tmp/libvirt-$1
	if [ "$1" = bookworm ]; then
		lv_in=
	else
		lv_in="chroot $PEERS/$1"
	fi
	[ -d $lv_root/etc ] || embed_root_init $lv_root
	lv_uri=$(embed_uri $lv_root)
	qemu_log=$lv_root/log/qemu/hwlab-qemu.log
}
# qemu_versions SUITE : "qemu=V libvirt=V" of the suite's packages
qemu_versions() {
	if [ "$1" = bookworm ]; then
		sed -n 's/^qemu-system-x86=/qemu=/p; s/^libvirt0=/libvirt=/p' /hwlab/lib/qemu-versions 2>/dev/null | tr '\n' ' '
	else
		sed -n 's/^qemu-system-x86=/qemu=/p; s/^libvirt0=/libvirt=/p' "$PEERS/$1/versions" | tr '\n' ' '
	fi
}

# qemu_domain_xml "GUEST ARGS" [hugetlb] : the domain: what the QMP-driven
# runs gave QEMU on its command line (-accel kvm -cpu host -m 128 -smp 1,
# -kernel, -initrd, -append, a serial port, no reboot), in libvirt's words;
# the serial port is a pipe (/tmp/qcon.out) that hwlab-stamp reads. With
# hugetlb, guest RAM is on the outer kernel's 2 MiB pages, as libvirt users
# ask for it (memoryBacking/hugepages: a hugetlbfs file under /dev/hugepages).
# qemu_xml_extra, when set, is more XML inside <domain> after <devices>
# (migrate_peer: a second QMP monitor, through libvirt's qemu:commandline)
qemu_domain_xml() {
	cat <<EOF
<domain type='kvm'>
  <name>hwlab-qemu</name>
  <memory unit='MiB'>128</memory>
$([ "${2:-}" = hugetlb ] && echo "  <memoryBacking><hugepages/></memoryBacking>")
  <vcpu>1</vcpu>
  <cpu mode='host-passthrough'/>
  <os>
    <type arch='x86_64' machine='pc'>hvm</type>
    <kernel>$LINUX_KERNEL</kernel>
    <initrd>$LINUX_INITRD</initrd>
    <cmdline>$(linux_append "printk.time=1 $1")</cmdline>
  </os>
  <on_poweroff>destroy</on_poweroff>
  <on_reboot>destroy</on_reboot>
  <on_crash>destroy</on_crash>
  <devices>
    <emulator>$QEMU</emulator>
    <serial type='pipe'><source path='/tmp/qcon'/></serial>
    <controller type='usb' model='none'/>
    <memballoon model='none'/>
  </devices>${qemu_xml_extra:-}
</domain>
EOF
}
# wait_lv FILE FRAGMENT... : until the watch wrote a line with them all, or
# it ended; bounded at 120 s (WL_BOUND tenths of a second)
wait_lv() {
	wl_f=$1 wl_n=0
	shift
	while ! json_line "$wl_f" "$@" >/dev/null && kill -0 "$watch_pid" 2>/dev/null &&
		[ $wl_n -lt "${WL_BOUND:-1200}" ]; do
		sleep 0.1
		wl_n=$((wl_n + 1))
	done
	json_line "$wl_f" "$@" >/dev/null
}
# start_qemu CONSOLE "GUEST ARGS" [hugetlb] : boot the guest in the current
# QEMU through its libvirt (sets vmm_pid, QEMU's pid, and lv, the watch's
# output) and wait for its target's INNER-READY; false if libvirt did not
# start QEMU (noboot empty) or the guest did not boot (noboot says why)
start_qemu() {
	sq_con=$1 sq_app=$2 sq_backing=${3:-}
	lv=${sq_con%.con}.lv
	noboot=
	: >"$sq_con"
	rm -f /tmp/qcon.in /tmp/qcon.out /tmp/lv.req
	mkfifo /tmp/qcon.in /tmp/qcon.out /tmp/lv.req
	mkdir -p "$(dirname $qemu_log)" && : >$qemu_log
	qemu_domain_xml "$sq_app" "$sq_backing" >/tmp/qemu.xml
	# opens when QEMU does; ends when QEMU goes
	hwlab-stamp </tmp/qcon.out >"$sq_con" &
	stamp_pid=$!
	# shellcheck disable=SC2086 # lv_in: "chroot DIR" or nothing
	timeout -s KILL "${VMM_TIMEOUT:-420}" $lv_in hwpoison-guest --connect "$lv_uri" --watch \
		--domain hwlab-qemu --start /tmp/qemu.xml </tmp/lv.req >"$lv" 2>"$lv.err" &
	watch_pid=$!
	exec 3>/tmp/lv.req
	# a libvirt's first start probes its QEMU's capabilities (cached in
	# its root for the next ones): several QEMU runs under nested TCG
	WL_BOUND=$(bound 3000) wait_lv "$lv" '"event":"watch_ready"'
	# (--live: the watch goes on writing its lines)
	vmm_pid=$(json-field --live "$lv" pid event=domain_started)
	if [ -z "$vmm_pid" ]; then
		sed 's/^/  watch: /' "$lv" "$lv.err"
		vmm_pid=$watch_pid
		return 1
	fi
	if ! wait_ready "$sq_con"; then
		echo "  start_qemu: $vmm did not boot $guest: $noboot"
		return 1
	fi
	echo "  start_qemu: $vmm (libvirt's QEMU pid $vmm_pid), guest ready: $(grep -c . "$sq_con") console lines"
}
# stop_qemu : the watch destroys the domain it started and ends
stop_qemu() {
	echo quit >&3 2>/dev/null
	exec 3>&-
	sq_n=0
	while kill -0 "$watch_pid" 2>/dev/null && [ $sq_n -lt 300 ]; do
		sleep 0.1
		sq_n=$((sq_n + 1))
	done
	kill -KILL "$watch_pid" "$vmm_pid" "$stamp_pid" 2>/dev/null
	wait
}
# qemu_poison GPA : ask the watch to poison GPA of QEMU's guest; sets out (the
# watch's poison line) and t0 (the time of the corrupt-pfn write)
qemu_poison() {
	echo "poison $1" >&3
	wait_lv "$lv" '"event":"poison_done"' "\"gpa\":\"$1\""
	out=$(json_line "$lv" '"event":"poison"' "\"gpa\":\"$1\"")
	t0=$(printf '%s\n' "$out" | json-field - t_ns)
}
# qemu_inject_time T0 : when the watch heard QEMU's first injection into its
# guest at or after T0 (its MEMORY_FAILURE event, recipient guest)
qemu_inject_time() {
	json-field --live "$lv" t_ns event=memory_failure recipient=guest action=inject |
		awk -v t0="$1" '$1 >= t0 { print; exit }'
}
# qemu_show CONSOLE : the watch's lines, the guest's machine-check lines and
# QEMU's own memory-error lines, for a case's first event
qemu_show() {
	sed 's/^/  watch: /' "$lv"
	grep -E 'Machine check|Machine Check|Memory failure|mce:|panic|INNER-SIGBUS|INNER-MCELOG' "$1" |
		sed "s/^/  con: [$vmm] /"
	grep -E 'MCE|memory error|Memory Error' $qemu_log | sed "s/^/  $vmm(stderr): /"
}
