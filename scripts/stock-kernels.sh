#!/usr/bin/env bash
# The newest stock kernel of each Debian suite, as users run it as a guest:
# DIR/SUITE/vmlinuz, DIR/SUITE/version ("PACKAGE VERSION SUITE") and
# DIR/SUITE/modules.cpio.gz (the msr driver, an initramfs fragment), from
# scripts/debian-suite.sh (cached outside the clone, keyed by version). A
# suite whose kernel cannot be had gets DIR/SUITE/unavailable with the
# reason instead, and the checks that need it skip with that reason. Files
# are replaced only when they change, so that make rebuilds nothing when
# no suite moved.
#
# Usage: scripts/stock-kernels.sh DIR [SUITE...]   (default: bookworm trixie sid)
# DIR/.changed: touched whenever a file here changed
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:?usage: $0 DIR [SUITE...]}
shift
[ $# -gt 0 ] || set -- bookworm trixie sid
prog=stock-kernels
. "$here/suite-files.sh"
for suite in "$@"; do
	mkdir -p "$dir/$suite"
	rc=0
	out=$("$here/debian-suite.sh" kernel "$suite" 2>"$dir/$suite/err") || rc=$?
	if [ $rc -ne 0 ]; then
		suite_unavailable "$suite" $rc kernel vmlinuz version modules.cpio.gz
		continue
	fi
	read -r image pkg ver <<<"$out"
	cp "$image" "$dir/$suite/vmlinuz.new"
	replace "$dir/$suite/vmlinuz"
	echo "$pkg $ver $suite" >"$dir/$suite/version.new"
	replace "$dir/$suite/version"
	# its modules (debian-suite.sh kernel: modules/NAME.ko beside the
	# image) as an initramfs fragment, /lib/modules/hwlab/NAME.ko, that a
	# scenario appends to the guest's initramfs (the kernel unpacks
	# concatenated archives); init loads them. Built from sorted names with
	# fixed times, so that an unchanged kernel gives the same bytes.
	mods=$(mktemp -d)
	mkdir -p "$mods/lib/modules/hwlab"
	cp "$(dirname "$image")"/modules/*.ko "$mods/lib/modules/hwlab/" 2>/dev/null || true
	find "$mods" -exec touch -h -d @0 {} +
	(cd "$mods" && find lib | LC_ALL=C sort | cpio -o -H newc --quiet --reproducible) |
		gzip -n -1 >"$dir/$suite/modules.cpio.gz.new"
	rm -rf "$mods"
	replace "$dir/$suite/modules.cpio.gz"
	suite_available "$suite"
	echo "stock-kernels: $suite: $pkg $ver"
done
