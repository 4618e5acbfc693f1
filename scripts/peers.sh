#!/usr/bin/env bash
# The newer QEMUs of the side-by-side (compare): each suite's QEMU with its
# own suite's libvirt, unpacked by scripts/debian-suite.sh into a sysroot
# cached outside the clone (keyed by every package version in it, so it is
# reused until the suite moves). Writes DIR/SUITE/sysroot (the sysroot's
# path) and DIR/SUITE/versions (its qemu-system-x86 and libvirt0 versions,
# as "PKG=VERSION" lines from its .hwlab-versions), or DIR/SUITE/unavailable
# with the reason when the suite cannot give them (debian-suite.sh's exit
# status 3): the image then has no such peer and its checks skip with that
# reason. outer-qemu/mkinitramfs.sh (PEERS=DIR) packs what of each sysroot
# runs. Files are replaced only when they change, so that make rebuilds the
# image only when a suite moved.
#
# Usage: scripts/peers.sh DIR [SUITE...]   (default: trixie sid)
# DIR/.changed: touched whenever a file here changed
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:?usage: $0 DIR [SUITE...]}
shift
[ $# -gt 0 ] || set -- trixie sid
# what runs: QEMU, the embedded libvirt driver and the libvirt client
# library, and libvirt_iohelper (libvirt-daemon-common), which writes a
# save's file for the driver (virDomainSave: the watch's "save FILE")
pkgs=(qemu-system-x86 libvirt-daemon-driver-qemu libvirt0 libvirt-daemon-common)
prog=peers
. "$here/suite-files.sh"
for suite in "$@"; do
	mkdir -p "$dir/$suite"
	rc=0
	sysroot=$("$here/debian-suite.sh" sysroot "$suite" "${pkgs[@]}" 2>"$dir/$suite/err") || rc=$?
	if [ $rc -ne 0 ]; then
		suite_unavailable "$suite" $rc sysroot sysroot versions
		continue
	fi
	echo "$sysroot" >"$dir/$suite/sysroot.new"
	replace "$dir/$suite/sysroot"
	{
		echo "suite=$suite"
		grep -E '^(qemu-system-x86|libvirt0)=' "$sysroot/.hwlab-versions"
	} >"$dir/$suite/versions.new"
	replace "$dir/$suite/versions"
	suite_available "$suite"
	echo "peers: $suite: $(grep -v '^suite=' "$dir/$suite/versions" | tr '\n' ' ')"
done
