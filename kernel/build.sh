#!/usr/bin/env bash
# Build an outer VM kernel: one of Debian's linux-source packages (the base:
# bookworm's 6.1, trixie's 6.12 or sid's 7.2) + kernel/BASE/series +
# kernel/config (and kernel/BASE/config where a base needs more) on top of
# x86_64 tinyconfig.
#
# The result is cached outside the repository, keyed by a hash of everything
# that decides it (series, patches, config fragments, this script, the source
# package and its version), so a second build with nothing changed is a
# no-op and a fresh clone in CI reuses the kernel that a session already
# built. The cache keeps the two newest kernels of each base and flavour, so
# that building one base never evicts another's.
#
# Usage: kernel/build.sh [OUTPUT_DIR]   (default: build/)
# Env:   HWLAB_KERNEL_BASE  6.1 (default), 6.12 or 7.2: kernel/BASE/ holds its
#                   series; 6.1's source is the host's linux-source-6.1 package
#                   (make deps), 6.12's and 7.2's come from trixie and sid through
#                   scripts/debian-suite.sh source (never installed on the host)
#        HWLAB_CACHE  cache root (default ${XDG_CACHE_HOME:-~/.cache}/hwpoison-lab)
#        HWLAB_KERNEL_TARBALL  the base's source tarball (default: above)
#        HWLAB_KERNEL_DIR  series/config/patches (default kernel/BASE; tests use others)
#        HWLAB_KERNEL_FLAVOUR  a name for a variant (default: main)
#        HWLAB_KERNEL_EXTRA_CONFIG  further fragment files, merged after
#                   kernel/config (the debug kernel's options, say)
#        HWLAB_KERNEL_TARGETS  make targets (default: bzImage)
#        JOBS  parallel make jobs (default: nproc)
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
out_dir=${1:-$here/build}
base=${HWLAB_KERNEL_BASE:-6.1}
cache=${HWLAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hwpoison-lab}
jobs=${JOBS:-$(nproc)}
flavour=${HWLAB_KERNEL_FLAVOUR:-main}
read -r -a extra_configs <<<"${HWLAB_KERNEL_EXTRA_CONFIG:-}"
read -r -a targets <<<"${HWLAB_KERNEL_TARGETS:-bzImage}"
start=$(date +%s)
# the base commit's date (see step 2/5); kernel/format-series.sh uses the same
HWLAB_BASE_DATE="2000-01-01T00:00:00+0000"

die() { echo "build-kernel: error: $*" >&2; exit 1; }
step() { printf '[kernel %4ds] %s\n' $(( $(date +%s) - start )) "$*"; }

# the Debian suite whose linux-source-BASE this base is
case $base in
6.1) suite=bookworm ;;
6.12) suite=trixie ;;
7.2) suite=sid ;;
*) die "HWLAB_KERNEL_BASE must be 6.1, 6.12 or 7.2, not '$base'" ;;
esac
kernel_dir=${HWLAB_KERNEL_DIR:-$here/kernel/$base}
series=$kernel_dir/series
fragment=$here/kernel/config
[ -f "$kernel_dir/config" ] && extra_configs=("$kernel_dir/config" "${extra_configs[@]}")
tarball=${HWLAB_KERNEL_TARBALL:-}
src_version=
if [ -z "$tarball" ] && [ "$base" = 6.1 ]; then
	tarball=/usr/src/linux-source-6.1.tar.xz
	[ -f "$tarball" ] || die "no kernel source at $tarball (install it with 'make deps', i.e. apt-get install linux-source-6.1)"
	src_version=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null || true)
elif [ -z "$tarball" ]; then
	# "TARBALL PACKAGE VERSION"; exit 3: the suite cannot be had (no network)
	rc=0
	got=$("$here/scripts/debian-suite.sh" source "$suite") || rc=$?
	[ $rc -eq 0 ] || { echo "build-kernel: error: no linux-source-$base from Debian $suite" >&2; exit "$rc"; }
	read -r tarball src_pkg src_version <<<"$got"
	[ "$src_pkg" = "linux-source-$base" ] ||
		die "Debian $suite's linux-source is now $src_pkg $src_version, not linux-source-$base: kernel/$base's series is for $base"
fi
[ -f "$tarball" ] || die "no kernel source at $tarball"
[ -n "$src_version" ] || src_version=$(stat -c '%s-%Y' "$tarball")
[ -f "$fragment" ] || die "missing config fragment $fragment"
[ -f "$series" ] || die "missing patch list $series"
case $flavour in *[!a-z0-9-]* | '') die "HWLAB_KERNEL_FLAVOUR must be [a-z0-9-]+, not '$flavour'" ;; esac
for f in "${extra_configs[@]}"; do
	[ -f "$f" ] || die "missing config fragment $f (HWLAB_KERNEL_EXTRA_CONFIG)"
done

# Patches named in the series, in order; blank lines and '#' comments skipped.
patches=()
while read -r line; do
	line=${line%%#*}
	line=$(echo "$line" | tr -d '[:space:]')
	[ -n "$line" ] || continue
	[ -f "$kernel_dir/$line" ] || die "$series names $line but $kernel_dir/$line does not exist"
	patches+=("$kernel_dir/$line")
done <"$series"

key=$( {
	echo "source linux-source-$base $src_version"
	cat "$0" "$fragment" "$series"
	for f in "${extra_configs[@]}"; do cat "$f"; done
	echo "targets ${targets[*]}"
	for p in "${patches[@]}"; do cat "$p"; done
} | sha256sum | cut -c1-16)
kdir=$cache/kernel-$base-$flavour-$key
tree=$kdir/src

publish() {
	mkdir -p "$out_dir"
	cp -f "$kdir/bzImage" "$out_dir/bzImage"
	cp -f "$kdir/config" "$out_dir/kernel.config"
	echo "$key" >"$out_dir/kernel.key"
	echo "$tree" >"$out_dir/kernel.tree"
	echo "linux-source-$base $src_version $suite" >"$out_dir/kernel.source"
}

mkdir -p "$cache"
# Two builds of one key (two worktrees, make test beside make compare) would
# remove each other's tree: the second waits, then finds the first's kernel.
exec 9>"$kdir.lock"
if ! flock -n 9; then
	step "another build of kernel $key is running; waiting for it"
	flock 9
fi

if [ -f "$kdir/bzImage" ]; then
	step "up to date: kernel $key (series+config unchanged), cached in $kdir"
	publish
	exit 0
fi

log=$kdir/build.log
rm -rf "$kdir"
mkdir -p "$kdir"
echo "full log: $log"

step "1/5 unpacking $(basename "$tarball") ($src_version)"
tar -xf "$tarball" -C "$kdir" >>"$log" 2>&1 || die "could not unpack $tarball (see $log)"
mv "$kdir/linux-source-$base" "$tree" || die "$(basename "$tarball") holds no linux-source-$base/"

# A throwaway git repository makes
# 'git am' apply the series with each patch's own author and changelog, so
# the tree can be reviewed with git log. (add -f: the tarball's .gitignore has /*.)
# A fixed committer and fixed dates make every commit id a function of the
# source and the patches alone: the base commit is the same on every machine,
# so the cover letter can name it (base-commit:, kernel/format-series.sh),
# and each patch's "From <sha>" line is the commit git am makes of it here
# (tests/host/check-patches.sh holds them to that).
git_id=(-c user.name=hwpoison-lab -c user.email=hwpoison-lab@localhost)
step "2/5 applying ${#patches[@]} patch(es) from kernel/$base/series"
(
	cd "$tree"
	git init -q
	git "${git_id[@]}" add -A -f >>"$log" 2>&1
	GIT_AUTHOR_DATE="$HWLAB_BASE_DATE" GIT_COMMITTER_DATE="$HWLAB_BASE_DATE" \
		git "${git_id[@]}" commit -q -m "linux-source-$base $src_version" >>"$log" 2>&1
) || die "could not create the git repository in $tree (see $log)"
for p in "${patches[@]}"; do
	step "      git am $(basename "$p")"
	if ! (cd "$tree" && git "${git_id[@]}" am -q --3way --committer-date-is-author-date "$p") \
		>>"$log" 2>&1; then
		(cd "$tree" && git am --abort) >/dev/null 2>&1 || true
		tail -n 20 "$log" >&2
		die "patch $(basename "$p") does not apply to linux-source-$base $src_version"
	fi
done

step "3/5 configuring: tinyconfig + kernel/config${extra_configs[*]:+ + ${extra_configs[*]#$here/}}"
(
	cd "$tree"
	make -s ARCH=x86_64 tinyconfig
	scripts/kconfig/merge_config.sh -m .config "$fragment" "${extra_configs[@]}"
	make -s ARCH=x86_64 olddefconfig
) >>"$log" 2>&1 || die "kernel configuration failed (see $log)"

# Kconfig drops options whose dependencies are unmet without a word; a
# kernel that lacks, say, HWPOISON_INJECT would boot and fail far later.
missing=()
while read -r want; do
	opt=${want%%=*}
	got=$(grep -E "^$opt=" "$tree/.config" || true)
	[ "$got" = "$want" ] || missing+=("$want (got: ${got:-not set})")
done < <(cat "$fragment" "${extra_configs[@]}" | grep -E '^CONFIG_[A-Z0-9_]+=' |
	awk -F= '{ last[$1] = $0; order[NR] = $1 } END { for (i = 1; i <= NR; i++) if (!seen[order[i]]++) print last[order[i]] }')
if [ ${#missing[@]} -gt 0 ]; then
	printf '  missing: %s\n' "${missing[@]}" >&2
	die "${#missing[@]} required kernel option(s) not set after olddefconfig"
fi

step "4/5 compiling ${targets[*]} with $jobs job(s) (cold: about 8 minutes on 2 cores; with ccache warm, about 2 minutes)"
ccache_cc=()
if command -v ccache >/dev/null 2>&1; then
	export CCACHE_DIR=$cache/ccache CCACHE_BASEDIR=$tree CCACHE_NOHASHDIR=1
	ccache_cc=(CC="ccache gcc")
fi
(
	cd "$tree"
	make ARCH=x86_64 -j"$jobs" "${ccache_cc[@]}" "${targets[@]}" >>"$log" 2>&1
) &
make_pid=$!
ticks=0
while kill -0 "$make_pid" 2>/dev/null; do
	sleep 2
	ticks=$((ticks + 1))
	if [ $((ticks % 15)) -eq 0 ] && kill -0 "$make_pid" 2>/dev/null; then
		step "      still compiling ($(grep -c '^  CC' "$log" || true) objects so far)"
	fi
done
wait "$make_pid" || { tail -n 30 "$log" >&2; die "kernel compile failed (see $log)"; }

step "5/5 done"
cp "$tree/arch/x86/boot/bzImage" "$kdir/bzImage"
cp "$tree/.config" "$kdir/config"
# Keep the two newest kernels of this base and flavour; each unpacked tree
# is over a gigabyte. (KEY is 16 hex digits.)
# (ls fails on a pattern nothing matches: under pipefail that must not
# fail the build, which is done)
{ ls -dt "$cache/kernel-$base-$flavour"-???????????????? 2>/dev/null || true; } | tail -n +3 |
	while read -r old; do rm -rf "$old" "$old.lock"; done
# kernels cached before the bases (kernel-KEY, kernel-FLAVOUR-KEY): gone
{ ls -d "$cache"/kernel-???????????????? "$cache"/kernel-[a-z]*-???????????????? 2>/dev/null || true; } |
	while read -r old; do rm -rf "$old" "$old.lock"; done
publish
step "kernel $key ready: $out_dir/bzImage"
