#!/usr/bin/env bash
# Pack the outer VM's initramfs: busybox-static, our /init, the static
# binaries built for the guest side, the scenario scripts and the check
# library they source (tests/lib/check.sh, taken from this checkout, packed
# as /hwlab/lib/check.sh) and kernel/features (/hwlab/lib/features).
#
# Usage: outer-qemu/mkinitramfs.sh OUTPUT.cpio.gz BINDIR SCENARIODIR [ASAN_VMM]
#
# ASAN_VMM: the VMM built with ASan+UBSan (make asan-build), which cannot be
# static: it goes to /hwlab/asan/hwlab-vmm with the shared libraries ldd
# finds for it, at the same paths, so that the asan scenario can run it on
# the outer VM's KVM (the machines this runs on have no /dev/kvm of their own).
#
# QEMU_BUNDLE (env): a qemu-system-x86_64 to pack as /usr/bin/qemu-system-x86_64,
# with the shared libraries ldd finds for it and the firmware a pc machine
# booting -kernel with -nodefaults loads (seabios, the linuxboot option ROM,
# the vapic ROM): the image of the side-by-side with QEMU (compare scenario).
#
# STOCK_KERNELS (env): a directory of Debian's stock kernels
# (scripts/stock-kernels.sh: SUITE/vmlinuz, SUITE/version and
# SUITE/modules.cpio.gz, or
# SUITE/unavailable), packed as /hwlab/data/stock/SUITE/: the guests users
# run, for the guest matrix and the side-by-side (compare image only).
#
# PEERS (env, with LIBVIRT_TOOL): a directory of newer QEMUs
# (scripts/peers.sh: SUITE/sysroot naming a Debian sysroot of that suite's
# qemu-system-x86 and libvirt, SUITE/versions, or SUITE/unavailable), each
# packed as a chroot at /hwlab/peers/SUITE/ pruned to what runs: QEMU, the
# firmware a pc machine booting -kernel loads, QEMU's TCG module where the
# suite builds TCG as one (libvirt probes with accel=kvm:tcg), libvirt.so,
# libvirt-qemu.so, the embedded QEMU driver and its CPU map, its
# libvirt_iohelper (the file writer of a save), the libvirt
# build of hwpoison-guest (built on bookworm's libvirt headers; the newer
# libvirt.so.0 keeps its ABI), /etc/passwd and /etc/group, and the shared
# libraries of all of these as the sysroot's own ld.so resolves them in the
# sysroot (never the host's ldd: a host library of another version must not
# end up in there). A suite without a sysroot gets only its unavailable file.
#
# UPSTREAM_SELFTESTS (env): a directory of upstream's mm selftests, one
# subdirectory per outer-kernel base (scripts/upstream-selftests.sh BASE
# DIR/BASE: the static programs, version, list, unbuilt), packed as
# /hwlab/data/selftests/BASE/ with tests/upstream/mm.known beside them: the
# upstream_mm scenario's image only (make upstream-selftests).
#
# UPSTREAM_KVM_SELFTESTS (env): a directory of KVM selftests, one
# subdirectory per patched base (scripts/kvm-selftests.sh build BASE
# DIR/BASE), packed as /hwlab/data/kvm-selftests/BASE/: the upstream_kvm
# scenario's, in the same image.
#
# LIBVIRT_TOOL (env, with QEMU_BUNDLE): hwpoison-guest built with libvirt,
# packed over the static one with its libraries, and what libvirt's
# embedded QEMU driver needs to run there: the driver module, its CPU map,
# a qemu.conf for a machine without daemons (outer-qemu/libvirt-qemu.conf),
# and /etc/passwd and /etc/group naming root and libvirt-qemu (libvirt 9.0
# looks its QEMU user up before it reads qemu.conf).
set -euo pipefail
out=$1 bindir=$2 scendir=$3 asan_vmm=${4:-}
qemu_bundle=${QEMU_BUNDLE:-}
libvirt_tool=${LIBVIRT_TOOL:-}
stock_kernels=${STOCK_KERNELS:-}
peers=${PEERS:-}
upstream_selftests=${UPSTREAM_SELFTESTS:-}
upstream_kvm=${UPSTREAM_KVM_SELFTESTS:-}
here=$(cd "$(dirname "$0")" && pwd)
check_lib=$here/../tests/lib/check.sh
busybox=${BUSYBOX:-/bin/busybox}

die() { echo "mkinitramfs: error: $*" >&2; exit 1; }
# first_file PATTERN: the first existing file the glob names, if any (not
# "ls | head -n 1", whose ls pipefail may fail)
first_file() {
	local f
	for f in $1; do
		[ -e "$f" ] && { echo "$f"; return 0; }
	done
	return 0
}
command -v cpio >/dev/null || die "cpio not found (make deps)"
[ -x "$busybox" ] || die "no $busybox (make deps installs busybox-static)"
# Matches on captured output, not "ldd | grep -q": grep exits at its first
# match, ldd then dies of SIGPIPE and, under pipefail, the test fails (2 of 3
# make initramfs on a loaded machine). tests/host/pipefail_lint.sh
[[ $(file -L "$busybox" 2>/dev/null) == *'statically linked'* ]] ||
	[[ $(ldd "$busybox" 2>&1) == *'not a dynamic'* ]] ||
	die "$busybox is not statically linked (install busybox-static)"
[ -f "$check_lib" ] || die "no check library at $check_lib"

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
# install_dynamic BINARY DEST: a dynamically linked program at DEST in the
# image, with the shared libraries ldd finds for it at their own paths
install_dynamic() {
	mkdir -p "$root$(dirname "$2")"
	install -m 0755 "$1" "$root$2"
	# "libx.so => /path (addr)" and "/lib64/ld-linux-x86-64.so.2 (addr)"
	libs=$(ldd "$1" | grep -o '/[^ ]*') || die "ldd $1 failed"
	for lib in $libs; do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
}
mkdir -p "$root"/{bin,dev,proc,sys,tmp,hwlab/bin,hwlab/lib,hwlab/scenarios}
cp "$busybox" "$root/bin/busybox"
install -m 0755 "$here/init" "$root/init"
for f in "$bindir"/*; do
	[ -f "$f" ] && [ -x "$f" ] && install -m 0755 "$f" "$root/hwlab/bin/"
done
[ -d "$bindir/data" ] && cp -r "$bindir/data" "$root/hwlab/"
cp "$scendir"/*.sh "$root/hwlab/scenarios/"
cp "$check_lib" "$root/hwlab/lib/check.sh"
# what each host kernel feature is and where it comes from (need_host's skips)
cp "$here/../kernel/features" "$root/hwlab/lib/features"
if [ -n "$asan_vmm" ]; then
	[ -x "$asan_vmm" ] || die "no ASan VMM at $asan_vmm (make asan-build)"
	install_dynamic "$asan_vmm" /hwlab/asan/hwlab-vmm
fi
if [ -n "$qemu_bundle" ]; then
	[ -x "$qemu_bundle" ] || die "no QEMU at $qemu_bundle (make deps installs qemu-system-x86)"
	install_dynamic "$qemu_bundle" /usr/bin/qemu-system-x86_64
	# QEMU looks for its firmware next to its binary: /usr/bin/../share/...
	share=$(dirname "$(readlink -f "$qemu_bundle")")/../share
	for fw in seabios/bios-256k.bin qemu/linuxboot_dma.bin qemu/kvmvapic.bin; do
		[ -f "$share/$fw" ] || die "QEMU firmware $share/$fw is missing (qemu-system-data, seabios)"
		mkdir -p "$root/usr/share/$(dirname "$fw")"
		cp -L "$share/$fw" "$root/usr/share/$fw"
	done
fi
if [ -n "$stock_kernels" ]; then
	[ -d "$stock_kernels" ] || die "no stock kernel directory $stock_kernels (scripts/stock-kernels.sh)"
	mkdir -p "$root/hwlab/data/stock"
	for d in "$stock_kernels"/*/; do
		suite=$(basename "$d")
		mkdir -p "$root/hwlab/data/stock/$suite"
		for f in vmlinuz version modules.cpio.gz unavailable; do
			[ -f "$d/$f" ] && cp "$d/$f" "$root/hwlab/data/stock/$suite/"
		done
	done
fi
if [ -n "$upstream_selftests" ]; then
	[ -d "$upstream_selftests" ] || die "no selftest directory $upstream_selftests (scripts/upstream-selftests.sh)"
	mkdir -p "$root/hwlab/data/selftests"
	for d in "$upstream_selftests"/*/; do
		[ -f "$d/list" ] && cp -r "${d%/}" "$root/hwlab/data/selftests/"
	done
	cp "$here/../tests/upstream/mm.known" "$root/hwlab/data/selftests/mm.known"
fi
if [ -n "$upstream_kvm" ]; then
	[ -d "$upstream_kvm" ] || die "no KVM selftest directory $upstream_kvm (scripts/kvm-selftests.sh build)"
	mkdir -p "$root/hwlab/data/kvm-selftests"
	for d in "$upstream_kvm"/*/; do
		ls "$d"*_test >/dev/null 2>&1 && cp -r "${d%/}" "$root/hwlab/data/kvm-selftests/"
	done
fi
if [ -n "$libvirt_tool" ]; then
	[ -x "$libvirt_tool" ] || die "no libvirt build of hwpoison-guest at $libvirt_tool (make)"
	[[ $(ldd "$libvirt_tool") == *libvirt.so* ]] || die "$libvirt_tool is not linked with libvirt"
	install_dynamic "$libvirt_tool" /hwlab/bin/hwpoison-guest
	driver=$(first_file '/usr/lib/*/libvirt/connection-driver/libvirt_driver_qemu.so')
	[ -n "$driver" ] || die "no libvirt QEMU driver (make deps installs libvirt-daemon-driver-qemu)"
	install_dynamic "$driver" "$driver"
	# libvirt probes QEMU's capabilities with accel=kvm:tcg, and the
	# distro's QEMU then loads its TCG accelerator module (QEMU itself,
	# told -accel kvm, never does)
	tcg=$(first_file '/usr/lib/*/qemu/accel-tcg-x86_64.so')
	[ -n "$tcg" ] || die "no QEMU TCG module accel-tcg-x86_64.so (qemu-system-x86)"
	install_dynamic "$tcg" "$tcg"
	[ -d /usr/share/libvirt/cpu_map ] || die "no /usr/share/libvirt/cpu_map (libvirt0)"
	mkdir -p "$root/usr/share/libvirt"
	cp -r /usr/share/libvirt/cpu_map "$root/usr/share/libvirt/"
	cp "$here/libvirt-qemu.conf" "$root/hwlab/lib/libvirt-qemu.conf"
	# the versions of the image's own QEMU and libvirt, for the tables
	for pkg in qemu-system-x86 libvirt0; do
		echo "$pkg=$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null || echo unknown)"
	done >"$root/hwlab/lib/qemu-versions"
	cp "$here/../tests/lib/libvirt_embed.sh" "$root/hwlab/lib/libvirt_embed.sh"
	mkdir -p "$root/etc"
	printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' \
		'libvirt-qemu:x:64055:64055:libvirt qemu:/nonexistent:/bin/false' >"$root/etc/passwd"
	printf '%s\n' 'root:x:0:' 'kvm:x:108:' 'libvirt-qemu:x:64055:' >"$root/etc/group"
fi
# pack_peer SUITE SYSROOT: the chroot /hwlab/peers/SUITE (see PEERS above)
. "$here/mkinitramfs-peer.sh"
if [ -n "$peers" ]; then
	[ -n "$libvirt_tool" ] || die "PEERS needs LIBVIRT_TOOL (hwpoison-guest's libvirt build runs in each peer)"
	[ -d "$peers" ] || die "no peer directory $peers (scripts/peers.sh)"
	for d in "$peers"/*/; do
		suite=$(basename "$d")
		if [ -f "$d/sysroot" ]; then
			pack_peer "$suite" "$(cat "$d/sysroot")"
		else
			[ -f "$d/unavailable" ] || die "peer $suite: neither $d/sysroot nor $d/unavailable"
			mkdir -p "$root/hwlab/peers/$suite"
			cp "$d/unavailable" "$root/hwlab/peers/$suite/unavailable"
		fi
	done
fi
(cd "$root" && find . -print0 | cpio --null -o -H newc --quiet) | gzip -1 >"$out.tmp"
mv "$out.tmp" "$out"
