#!/usr/bin/env bash
# One outer (host) kernel, ready for outer-qemu/boot.sh: OUTDIR/bzImage,
# OUTDIR/modules.cpio.gz (the modules it must load, an initramfs fragment
# appended to the outer image; empty for our kernels, which build
# everything in), OUTDIR/version ("HOST KIND PACKAGE VERSION") and
# OUTDIR/features (kernel/features: what its checks may count on).
#
# HOST is what users pick (make HOST=...):
#   6.1, 6.12, 7.2          our kernels: Debian's linux-source-BASE with
#                           kernel/BASE/series, tinyconfig + kernel/config
#                           (kernel/build.sh, cached by hash)
#   bookworm, trixie, sid   Debian's stock kernel of that suite as it ships
#                           (linux-image + its modules: kvm, kvm-amd,
#                           hwpoison_inject, msr, brd, ext4, crc32c and
#                           what they depend on), never installed here
#                           (scripts/debian-suite.sh kernel, cached by version)
# A stock kernel that cannot be had (no network) exits 3 with the reason.
#
# Usage: scripts/host-kernel.sh HOST OUTDIR
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
host=${1:?usage: $0 HOST OUTDIR} out=${2:?usage: $0 HOST OUTDIR}
die() { echo "host-kernel: error: $*" >&2; exit 1; }
# the modules a stock outer kernel loads (outer-qemu/init: in this order,
# each after what it depends on): KVM on the outer VM's AMD vCPU (kvm-intel
# refuses it: EOPNOTSUPP), the injector, /dev/cpu/N/msr, the RAM disks and
# ext2 of page_states (ext4's driver mounts ext2; before 7.x it asks the
# crypto API for crc32c at mount, which no .modinfo names: "EXT4-fs (ram0):
# Cannot load crc32c driver" on bookworm and trixie, so crc32c_generic is
# named here; 7.x has crc32c built in, and a module the package lacks is
# left out)
stock_modules="kvm-amd hwpoison_inject msr brd ext4 crc32c_generic"

# upstream_has VERSION UPSTREAM : VERSION (6.12.118) is UPSTREAM (6.6) or later
upstream_has() {
	local lowest
	[ "$2" != - ] || return 1
	lowest=$(printf '%s\n%s\n' "$2" "${1%%[-+~]*}" | sort -V)
	[ "${lowest%%$'\n'*}" = "$2" ]
}
# features VERSION [PATCH...] : kernel/features' names this kernel has
features() {
	local version=$1 name up pattern p subject
	shift
	while read -r name up pattern; do
		if upstream_has "$version" "$up"; then
			echo "$name"
			continue
		fi
		for p in "$@"; do
			# the Subject, folded onto one line
			subject=$(sed -n '/^Subject:/{N;s/\n//;p;q}' "$p")
			if [[ $subject =~ $pattern ]]; then
				echo "$name"
				break
			fi
		done
	done < <(grep -v '^[[:space:]]*\(#\|$\)' "$here/kernel/features")
}

mkdir -p "$out"
case $host in
6.1 | 6.12 | 7.2)
	HWLAB_KERNEL_BASE=$host "$here/kernel/build.sh" "$out"
	read -r _ version _ <"$out/kernel.source"
	# the kernel's own version, not the package's (6.1.192-3 → 6.1.192)
	version=$(sed -n 's/^# Linux\/[^ ]* \([0-9.]*\) Kernel Configuration$/\1/p' "$out/kernel.config")
	[ -n "$version" ] || die "no kernel version in $out/kernel.config"
	mapfile -t patches < <(grep -v '^[[:space:]]*\(#\|$\)' "$here/kernel/$host/series" |
		sed "s|^|$here/kernel/$host/|")
	features "$version" "${patches[@]}" >"$out/features.new"
	: | gzip -n >"$out/modules.cpio.gz.new"
	echo "$host patched linux-source-$host $(cut -d' ' -f2 "$out/kernel.source")" >"$out/version.new"
	;;
bookworm | trixie | sid)
	rc=0
	# shellcheck disable=SC2086
	got=$("$here/scripts/debian-suite.sh" kernel "$host" $stock_modules) || rc=$?
	[ $rc -eq 0 ] || exit "$rc"
	read -r image pkg ver <<<"$got"
	cp "$image" "$out/bzImage.new"
	mods=$(mktemp -d)
	trap 'rm -rf "$mods"' EXIT
	dir=$mods/lib/modules/hwlab-host
	mkdir -p "$dir"
	cp "$(dirname "$image")"/modules/*.ko "$(dirname "$image")/modules/order" "$dir/"
	find "$mods" -exec touch -h -d @0 {} +
	(cd "$mods" && find lib | LC_ALL=C sort | cpio -o -H newc --quiet --reproducible) |
		gzip -n -1 >"$out/modules.cpio.gz.new"
	# linux-image-6.12.118+deb13-amd64 → 6.12.118
	version=$(sed 's/^linux-\(image\|binary\)-\([0-9.]*\).*/\2/' <<<"$pkg")
	features "$version" >"$out/features.new"
	echo "$host stock $pkg $ver" >"$out/version.new"
	for f in bzImage; do cmp -s "$out/$f.new" "$out/$f" && rm "$out/$f.new" || mv "$out/$f.new" "$out/$f"; done
	rm -f "$out/kernel.tree" "$out/kernel.key" "$out/kernel.config" "$out/kernel.source"
	;;
*) echo "host-kernel: error: HOST must be 6.1, 6.12, 7.2 (ours) or bookworm, trixie, sid (Debian's stock), not '$host'" >&2; exit 2 ;;
esac
# replaced only when changed, so that make rebuilds nothing when no host moved
for f in modules.cpio.gz features version; do
	cmp -s "$out/$f.new" "$out/$f" && rm "$out/$f.new" || mv "$out/$f.new" "$out/$f"
done
echo "host-kernel: $(cat "$out/version"); features: $(tr '\n' ' ' <"$out/features")"
