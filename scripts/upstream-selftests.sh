#!/usr/bin/env bash
# Build upstream's own mm selftests from the Debian linux-source tree of one
# outer-kernel base, statically (the outer VM's initramfs has no libc), for
# the upstream_mm scenario.
#
# Usage: scripts/upstream-selftests.sh BASE OUTDIR
#   BASE    6.1 (/usr/src/linux-source-6.1.tar.xz, the tree kernel/build.sh
#           patches), 6.12 (trixie's linux-source) or 7.2 (sid's), each
#           through scripts/debian-suite.sh source SUITE
#   OUTDIR  gets the programs tests/upstream/mm.list names for BASE (and
#           for an older base from BASE's tree, OLDER@BASE), and version
#           ("PACKAGE VERSION" of the source), list (those rows), unbuilt (programs that did not build, with the reason),
#           key (the cache key below)
#
# Only what the build reads is unpacked (top Makefile, scripts/, include/,
# arch/x86/, tools/, mm/ and lib/ headers), into a cache directory outside the
# clone keyed by the source's version, this script and the program list:
# ${HWLAB_CACHE:-~/.cache/hwpoison-lab}/selftests-BASE-KEY. The tree's uapi
# headers come from its own `make headers` (usr/include, what the selftests'
# lib.mk passes as KHDR_INCLUDES), so a test of a newer tree is compiled with
# that tree's definitions, not this host's linux-libc-dev. The programs are
# built by the tree's own Makefile (make -C tools/testing/selftests/mm
# OUTPUT=... LDFLAGS=-static, one target per program, -k): a program that
# does not build is reported in unbuilt, not fatal. The unpacked tree is
# removed after the build; the built set is kept. A second run with nothing
# changed only compares the key: OUTDIR is left untouched, so make does not
# see it change.
#
# The host's libraries are linked in: -lnuma (ksm_tests, migration, rmap)
# and -lcap (mlock-random-test, memfd_secret) need libnuma-dev and
# libcap-dev (make deps). The 6.12/7.2 Makefiles link -luring into cow and
# gup_longterm only when liburing-dev is there (their check_config.sh):
# without it they build without their io_uring cases.
#
# Exit: 0 built (or cached), 1 failure, 2 bad usage, 3 the base's source is
# not available (debian-suite.sh's 3: no network, the suite moved on).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cache=${HWLAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hwpoison-lab}
list=$here/tests/upstream/mm.list
debian_suite=${HWLAB_DEBIAN_SUITE:-$here/scripts/debian-suite.sh}

die() { echo "upstream-selftests: error: $*" >&2; exit 1; }
[ $# -eq 2 ] || { echo "usage: $0 6.1|6.12|7.2 OUTDIR" >&2; exit 2; }
base=$1 out=$2
[ -f "$list" ] || die "no $list"

# the source tarball of BASE: "TARBALL PACKAGE VERSION"
case $base in
6.1)
	tarball=/usr/src/linux-source-6.1.tar.xz
	[ -f "$tarball" ] || die "no $tarball (make deps installs linux-source-6.1)"
	source="$tarball linux-source-6.1 $(dpkg-query -W -f='${Version}' linux-source-6.1)"
	;;
6.12 | 7.2)
	suite=trixie
	[ "$base" = 7.2 ] && suite=sid
	rc=0
	source=$("$debian_suite" source "$suite") || rc=$?
	[ $rc -eq 0 ] || { echo "upstream-selftests: error: no $base source from Debian $suite" >&2; exit "$rc"; }
	;;
*) echo "upstream-selftests: error: BASE must be 6.1, 6.12 or 7.2, not '$base'" >&2; exit 2 ;;
esac
read -r tarball pkg version <<<"$source"
# sid moves: its linux-source may be a newer series than the base asked for
[ "$pkg" = "linux-source-$base" ] ||
	{ echo "upstream-selftests: error: Debian's source for $base is now $pkg $version" >&2; exit 3; }

# mm.list's rows built from BASE's tree: those for BASE, and those run on
# an older base from this tree (OLDER@BASE: a backport's own upstream test),
# and the programs they run (the command's first word)
rows=$(awk -v base="$base" '/^[[:space:]]*(#|$)/ { next }
	{ n = split($2, b, ","); for (i = 1; i <= n; i++)
		if (b[i] == base || b[i] ~ "@" base "$") { print; next } }' "$list")
[ -n "$rows" ] || die "$list has no rows for base $base"
programs=$(awk '{ print $5 }' <<<"$rows" | LC_ALL=C sort -u)

key=$( {
	echo "$pkg $version"
	cat "$0"
	echo "$programs"
} | sha256sum | cut -c1-16)
set_dir=$cache/selftests-$base-$key

# publish: the built set into OUTDIR, unless it already holds this key
publish() {
	if [ -f "$out/key" ] && [ "$(cat "$out/key")" = "$key" ] && [ "$(cat "$out/list")" = "$rows" ]; then
		echo "upstream-selftests: $base: $out is current ($pkg $version)"
		return 0
	fi
	rm -rf "$out.tmp"
	mkdir -p "$out.tmp"
	cp -p "$set_dir"/bin/* "$out.tmp/" 2>/dev/null || true
	cp "$set_dir/version" "$set_dir/unbuilt" "$out.tmp/"
	echo "$rows" >"$out.tmp/list"
	echo "$key" >"$out.tmp/key"
	rm -rf "$out"
	mv "$out.tmp" "$out"
	echo "upstream-selftests: $base: $(ls "$set_dir/bin" | wc -l) programs in $out ($pkg $version;" \
		"$(grep -c . "$set_dir/unbuilt" || true) not built: $out/unbuilt)"
}

if [ -f "$set_dir/done" ]; then
	publish
	exit 0
fi

mkdir -p "$cache"
exec 9>"$set_dir.lock"
flock 9
# (another run may have built it while this one waited)
if [ -f "$set_dir/done" ]; then
	publish
	exit 0
fi
rm -rf "$set_dir"
work=$(mktemp -d "$cache/selftests-$base.XXXXXX")
trap 'rm -rf "$work"' EXIT
top=linux-source-$base
echo "upstream-selftests: $base: unpacking $pkg $version"
nice -n 10 tar -xJf "$tarball" -C "$work" --wildcards "$top/Makefile" "$top/scripts" "$top/include" \
	"$top/arch/x86" "$top/tools" "$top/mm/*.h" "$top/lib/*.h"
tree=$work/$top
# 6.1 still calls the directory vm/ (renamed mm/ in 6.3)
testdir=$tree/tools/testing/selftests/mm
[ -d "$testdir" ] || testdir=$tree/tools/testing/selftests/vm
[ -f "$testdir/Makefile" ] || die "$pkg $version has no tools/testing/selftests/mm (or vm)"
echo "upstream-selftests: $base: make headers"
nice -n 10 make -C "$tree" -s headers >"$work/build.log" 2>&1 || { tail -n 20 "$work/build.log" >&2; die "make headers failed"; }

mkdir -p "$work/bin"
targets=()
for p in $programs; do targets+=("$work/bin/$p"); done
echo "upstream-selftests: $base: building $(wc -w <<<"$programs") programs (static)"
# -k: one program that does not build leaves the others; unbuilt says which.
# -include sys/syscall.h, for 6.1 only: 6.1's mrelease_test.c uses
# __NR_process_mrelease but includes nothing that defines it, so its own
# fallback, -1, made every call ENOSYS and the test a skip (6.12's includes
# <sys/syscall.h> itself). Not for the others: mseal_test.c includes
# <asm-generic/unistd.h>, which has no include guard, and after x86_64's
# numbers it silently put the generic ones in their place (its mprotect
# became timer_delete, its mremap remap_file_pages: 71 of 88 failed).
extra=()
[ "$base" = 6.1 ] && extra=(EXTRA_CFLAGS="-include sys/syscall.h")
nice -n 10 make -C "$testdir" -k -j2 OUTPUT="$work/bin" LDFLAGS=-static \
	"${extra[@]}" "${targets[@]}" \
	>>"$work/build.log" 2>&1 || true
: >"$work/unbuilt"
for p in $programs; do
	f=$work/bin/$p
	if [ ! -x "$f" ]; then
		why=$(grep -E "error:|undefined reference|cannot find" "$work/build.log" | grep -F "$p" | sed -n 1p || true)
		echo "$p build failed: ${why:-see the build log}" >>"$work/unbuilt"
	elif [[ $(file -L "$f") != *'statically linked'* ]]; then
		echo "$p is not statically linked" >>"$work/unbuilt"
		rm -f "$f"
	fi
done
# only the programs: the Makefile leaves local_config.* and objects beside them
find "$work/bin" -mindepth 1 -not -type f -prune -exec rm -rf {} +
for f in "$work/bin"/*; do
	grep -qx "$(basename "$f")" <<<"$programs" || rm -f "$f"
done
strip "$work/bin"/* 2>/dev/null || true
echo "$pkg $version" >"$work/version"
mkdir -p "$set_dir"
mv "$work/bin" "$work/version" "$work/unbuilt" "$work/build.log" "$set_dir/"
touch "$set_dir/done"
# keep this base's two newest sets
ls -dt "$cache/selftests-$base"-???????????????? 2>/dev/null | tail -n +3 | xargs -r rm -rf
publish
