#!/usr/bin/env bash
# Pack the Linux guest's initramfs: busybox-static, guest-linux/init and
# the workload. It travels inside the outer VM's initramfs, to be booted by
# hwlab-vmm there.
# Usage: guest-linux/mkinitramfs.sh OUTPUT.cpio.gz POISON_TARGET [MCELOG_WATCH]
set -euo pipefail
out=$1 target=$2 mcelog_watch=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
busybox=${BUSYBOX:-/bin/busybox}

die() { echo "mkinitramfs (guest): error: $*" >&2; exit 1; }
command -v cpio >/dev/null || die "cpio not found (make deps)"
[ -x "$busybox" ] || die "no $busybox (make deps installs busybox-static)"
# a match, not "file | grep -q": under pipefail grep's early exit can kill
# file with SIGPIPE and fail the test (tests/host/pipefail_lint.sh)
[[ $(file -L "$busybox" 2>/dev/null) == *'statically linked'* ]] ||
	die "$busybox is not statically linked (install busybox-static)"
[ -x "$target" ] || die "no workload at $target"

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,dev,proc,sys}
cp "$busybox" "$root/bin/busybox"
install -m 0755 "$here/init" "$root/init"
install -m 0755 "$target" "$root/bin/poison_target"
[ -z "$mcelog_watch" ] || install -m 0755 "$mcelog_watch" "$root/bin/mcelog_watch"
(cd "$root" && find . -print0 | cpio --null -o -H newc --quiet) | gzip -1 >"$out.tmp"
mv "$out.tmp" "$out"
