# The newer QEMUs (compare image): /hwlab/peers/SUITE/ is a chroot of
# that Debian suite's QEMU and libvirt (outer-qemu/mkinitramfs.sh, PEERS),
# with /hwlab/peers/SUITE/versions ("qemu-system-x86=V", "libvirt0=V"), or
# only /hwlab/peers/SUITE/unavailable (why the image has no such peer).
# Sourced by _lib.sh.
PEERS=/hwlab/peers
# peer_ready SUITE : the suite's chroot is there and has what QEMU and the
# tools in it use from the outer VM bind-mounted (once a boot): /dev (with
# /dev/kvm), the hugetlbfs at /dev/hugepages (mounted here first if it is
# not yet, so that the chroot sees the same one), /proc (the tools read
# /proc/PID/pagemap and exe), /sys with debugfs (the injectors), /tmp (the
# consoles' pipes, libvirt's embedded root) and /hwlab/data (the guests).
# Else false, with the reason in peer_reason (for skip).
peer_ready() {
	pr_root=$PEERS/$1
	peer_reason=
	if [ -f "$pr_root/unavailable" ]; then
		peer_reason="no QEMU of Debian $1 in this image: $(cat "$pr_root/unavailable")"
		return 1
	fi
	if [ ! -x "$pr_root/usr/bin/qemu-system-x86_64" ]; then
		peer_reason="no QEMU of Debian $1 in this image (the compare image carries $PEERS)"
		return 1
	fi
	[ -f "$pr_root/.mounted" ] && return 0
	# (the outer VM's busybox has no mountpoint applet)
	if ! grep -q ' /dev/hugepages hugetlbfs ' /proc/mounts; then
		mkdir -p /dev/hugepages && mount -t hugetlbfs hugetlbfs /dev/hugepages
	fi
	for pr_d in /dev /dev/hugepages /proc /sys /tmp /hwlab/data; do
		mkdir -p "$pr_root$pr_d"
		if ! mount -o bind "$pr_d" "$pr_root$pr_d"; then
			peer_reason="cannot bind-mount $pr_d into $pr_root"
			return 1
		fi
	done
	mount -t debugfs debugfs "$pr_root/sys/kernel/debug"
	: >"$pr_root/.mounted"
}
# peer_run SUITE COMMAND... : COMMAND in the suite's chroot (exec'd: its
# pid is the command's, as the tools that check /proc/PID/exe need)
peer_run() {
	peer_ready "$1" || { echo "peer_run: $peer_reason" >&2; return 127; }
	pr_suite=$1
	shift
	exec_in=$PEERS/$pr_suite
	chroot "$exec_in" "$@"
}
# peer_qemu SUITE ARGS... : the suite's qemu-system-x86_64 with ARGS (paths
# as the outer VM names them under /dev, /tmp and /hwlab/data), e.g. in the
# background: peer_qemu sid -accel kvm -cpu host ... & qemu_pid=$! (a
# function in the background is a subshell: its pid is not QEMU's; for
# that, "chroot $PEERS/sid /usr/bin/qemu-system-x86_64 ..." after peer_ready)
peer_qemu() {
	pq_suite=$1
	shift
	peer_run "$pq_suite" /usr/bin/qemu-system-x86_64 "$@"
}
# peer_version SUITE PKG : the package's version in the suite's chroot
peer_version() { sed -n "s/^$2=//p" "$PEERS/$1/versions" 2>/dev/null; }
