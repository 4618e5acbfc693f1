#!/usr/bin/env bash
# Pack the outer VM's initramfs: busybox-static, our /init, the static
# binaries built for the guest side and the scenario scripts.
#
# Usage: outer-qemu/mkinitramfs.sh OUTPUT.cpio.gz BINDIR SCENARIODIR
set -euo pipefail
out=$1 bindir=$2 scendir=$3
here=$(cd "$(dirname "$0")" && pwd)
busybox=${BUSYBOX:-/bin/busybox}

die() { echo "mkinitramfs: error: $*" >&2; exit 1; }
command -v cpio >/dev/null || die "cpio not found (make deps)"
[ -x "$busybox" ] || die "no $busybox (make deps installs busybox-static)"
file -L "$busybox" 2>/dev/null | grep -q 'statically linked' ||
	ldd "$busybox" 2>&1 | grep -q 'not a dynamic' ||
	die "$busybox is not statically linked (install busybox-static)"

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,dev,proc,sys,tmp,hwlab/bin,hwlab/scenarios}
cp "$busybox" "$root/bin/busybox"
install -m 0755 "$here/init" "$root/init"
for f in "$bindir"/*; do
	[ -f "$f" ] && [ -x "$f" ] && install -m 0755 "$f" "$root/hwlab/bin/"
done
[ -d "$bindir/data" ] && cp -r "$bindir/data" "$root/hwlab/"
cp "$scendir"/*.sh "$root/hwlab/scenarios/"
(cd "$root" && find . -print0 | cpio --null -o -H newc --quiet) | gzip -1 >"$out.tmp"
mv "$out.tmp" "$out"
