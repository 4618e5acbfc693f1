#!/usr/bin/env bash
# Pack the outer VM's initramfs: busybox-static, our /init, the static
# binaries built for the guest side, the scenario scripts and the check
# library they source (tests/lib/check.sh, taken from this checkout, packed
# as /hwlab/lib/check.sh).
#
# Usage: outer-qemu/mkinitramfs.sh OUTPUT.cpio.gz BINDIR SCENARIODIR
set -euo pipefail
out=$1 bindir=$2 scendir=$3
here=$(cd "$(dirname "$0")" && pwd)
check_lib=$here/../tests/lib/check.sh
busybox=${BUSYBOX:-/bin/busybox}

die() { echo "mkinitramfs: error: $*" >&2; exit 1; }
command -v cpio >/dev/null || die "cpio not found (make deps)"
[ -x "$busybox" ] || die "no $busybox (make deps installs busybox-static)"
file -L "$busybox" 2>/dev/null | grep -q 'statically linked' ||
	ldd "$busybox" 2>&1 | grep -q 'not a dynamic' ||
	die "$busybox is not statically linked (install busybox-static)"
[ -f "$check_lib" ] || die "no check library at $check_lib"

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,dev,proc,sys,tmp,hwlab/bin,hwlab/lib,hwlab/scenarios}
cp "$busybox" "$root/bin/busybox"
install -m 0755 "$here/init" "$root/init"
for f in "$bindir"/*; do
	[ -f "$f" ] && [ -x "$f" ] && install -m 0755 "$f" "$root/hwlab/bin/"
done
[ -d "$bindir/data" ] && cp -r "$bindir/data" "$root/hwlab/"
cp "$scendir"/*.sh "$root/hwlab/scenarios/"
cp "$check_lib" "$root/hwlab/lib/check.sh"
(cd "$root" && find . -print0 | cpio --null -o -H newc --quiet) | gzip -1 >"$out.tmp"
mv "$out.tmp" "$out"
