#!/usr/bin/env bash
# Pack the Linux guest's initramfs: busybox-static, guest-linux/init and
# the workload. It travels inside the outer VM's initramfs, to be booted by
# hwlab-vmm there.
# Usage: guest-linux/mkinitramfs.sh OUTPUT.cpio.gz POISON_TARGET [MCELOG_WATCH [MSR_POKE [KMSG_WATCH]]]
#
# RAS_SUITE (env): also pack that Debian suite's rasdaemon and sqlite3 CLI
# (scripts/debian-suite.sh sysroot SUITE rasdaemon sqlite3), for stock guest
# kernels, which have the ras/mce tracepoints (init: hwlab_inner.ras=1). Only
# what they run with: the two binaries, the shared libraries the sysroot's
# own ld.so resolves for them inside the sysroot (not the host's ldd, whose
# libc is another suite's), the suite's /etc/default/rasdaemon (the
# service's environment) and /etc/ras, the empty /var/lib/rasdaemon its
# database goes to, and the sysroot's versions as /etc/hwlab-ras-versions.
# When the suite cannot give them (debian-suite.sh exits 3), the image is
# built without them and its message goes to /etc/hwlab-ras-unavailable,
# which init prints as the reason.
set -euo pipefail
out=$1 target=$2 mcelog_watch=${3:-} msr_poke=${4:-} kmsg_watch=${5:-}
here=$(cd "$(dirname "$0")" && pwd)
busybox=${BUSYBOX:-/bin/busybox}
ras_suite=${RAS_SUITE:-}

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
# init sources it for ras=1
install -D -m 0644 "$here/ras.sh" "$root/lib/hwlab/ras.sh"
install -m 0755 "$target" "$root/bin/poison_target"
[ -z "$mcelog_watch" ] || install -m 0755 "$mcelog_watch" "$root/bin/mcelog_watch"
[ -z "$msr_poke" ] || install -m 0755 "$msr_poke" "$root/bin/msr_poke"
[ -z "$kmsg_watch" ] || install -m 0755 "$kmsg_watch" "$root/bin/kmsg_watch"

# install_from SYSROOT PATH: PATH (absolute inside the sysroot) at the same
# path in the image, symlinks followed (a library's soname link to its file)
install_from() {
	[ -e "$1$2" ] || die "no $2 in $1"
	mkdir -p "$root$(dirname "$2")"
	cp -L "$1$2" "$root$2"
}
# install_closure SYSROOT LDSO PROGRAM: PROGRAM (a path inside the sysroot)
# and every library the sysroot's own ld.so resolves for it there
install_closure() {
	local sysroot=$1 ldso=$2 prog=$3 list lib
	local libpath=$sysroot/usr/lib/x86_64-linux-gnu:$sysroot/lib/x86_64-linux-gnu
	install_from "$sysroot" "$prog"
	# captured, then parsed: "libx.so.N => /SYSROOT/usr/lib/... (0x...)"
	list=$("$sysroot$ldso" --library-path "$libpath" --list "$sysroot$prog") ||
		die "$ldso --list $prog failed in $sysroot"
	[[ $list != *'not found'* ]] || die "$prog: a library is not in $sysroot: $list"
	for lib in $(printf '%s\n' "$list" | sed -n "s|.* => $sysroot\(/[^ ]*\) (0x.*|\1|p"); do
		install_from "$sysroot" "$lib"
	done
}
if [ -n "$ras_suite" ]; then
	suite_err=$(mktemp)
	rc=0
	sysroot=$("$here/../scripts/debian-suite.sh" sysroot "$ras_suite" rasdaemon sqlite3 \
		2>"$suite_err") || rc=$?
	case $rc in
	0)
		# the programs' interpreter, PT_INTERP /lib64/ld-linux-x86-64.so.2; in
		# merged-/usr Debian that is a link base-files makes, not in any .deb
		ldso=/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2
		[ -x "$sysroot$ldso" ] || die "no $ldso in $sysroot"
		install_from "$sysroot" "$ldso"
		mkdir -p "$root/lib64"
		ln -s ../usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 "$root/lib64/ld-linux-x86-64.so.2"
		install_closure "$sysroot" "$ldso" /usr/sbin/rasdaemon
		install_closure "$sysroot" "$ldso" /usr/bin/sqlite3
		install_from "$sysroot" /etc/default/rasdaemon
		cp -a "$sysroot/etc/ras" "$root/etc/ras"
		mkdir -p "$root/var/lib/rasdaemon"
		cp "$sysroot/.hwlab-versions" "$root/etc/hwlab-ras-versions"
		echo "mkinitramfs (guest): rasdaemon and sqlite3 of $ras_suite from $sysroot:" \
			"$(grep -E '^(rasdaemon|sqlite3)=' "$sysroot/.hwlab-versions" | tr '\n' ' ')" >&2
		;;
	3)
		# the image without them: init prints why, the checks SKIP with it
		mkdir -p "$root/etc"
		# its own message (apt's lines before it are in the build's log)
		{ grep '^debian-suite: error:' "$suite_err" || cat "$suite_err"; } |
			tr '\n' ' ' | sed 's/ *$//' >"$root/etc/hwlab-ras-unavailable"
		echo "mkinitramfs (guest): warning: no rasdaemon in $out: $(cat "$suite_err")" >&2
		;;
	*)
		cat "$suite_err" >&2
		rm -f "$suite_err"
		die "scripts/debian-suite.sh sysroot $ras_suite rasdaemon sqlite3 failed (exit $rc)"
		;;
	esac
	rm -f "$suite_err"
fi
(cd "$root" && find . -print0 | cpio --null -o -H newc --quiet) | gzip -1 >"$out.tmp"
mv "$out.tmp" "$out"
