#!/usr/bin/env bash
# Packages of another Debian suite (trixie, sid, ...) without installing
# anything on this machine: a private apt configuration (its own sources
# list, package lists, archive cache and an empty dpkg status, under the
# cache root) resolves them, `apt-get download` fetches them, and
# `dpkg-deb -x` unpacks them into a sysroot outside the clone. Nothing runs
# dpkg -i or apt-get install, and the host's own apt state is never read or
# written.
#
# Usage:
#   scripts/debian-suite.sh sysroot SUITE PKG...
#       PKG and its whole runtime closure (Depends and Pre-Depends, no
#       Recommends) unpacked into one sysroot; prints its path. The sysroot
#       is keyed by every package=version in it, so it is reused until the
#       suite moves, and its versions file lists them.
#   scripts/debian-suite.sh kernel SUITE [MODULE...]
#       the suite's newest stock kernel (what linux-image-amd64 depends on):
#       prints "VMLINUZ PACKAGE VERSION"; only the image is unpacked, and
#       beside it modules/NAME.ko, decompressed, of the modules asked for
#       (default: msr, /dev/cpu/N/msr, what the test guests load) and every
#       module they depend on (depends= in their .modinfo), with modules/order
#       listing them in an order insmod can load them in (dependencies
#       first). An outer VM booting a stock host kernel asks for kvm-amd
#       and hwpoison_inject this way.
#   scripts/debian-suite.sh source SUITE
#       the suite's newest linux-source-X.Y (what linux-source depends on):
#       prints "TARBALL PACKAGE VERSION", the tarball kept outside the clone
#       by version (kernel/build.sh unpacks and patches it).
#   scripts/debian-suite.sh version SUITE PKG
#       the suite's candidate version of PKG.
#
# The suite's lists are refreshed when older than HWLAB_SUITE_MAX_AGE
# seconds (default 86400): sid moves daily, and the newest candidate is the
# one taken, never a pinned version that will vanish from the mirror.
#
# A package the suite does not have (or a mirror that cannot be reached)
# ends with "debian-suite: error: ..." naming the package and the suite,
# exit status 3 (callers SKIP on 3; 1 is any other failure, 2 a bad usage).
#
# Env: HWLAB_CACHE (default ${XDG_CACHE_HOME:-~/.cache}/hwpoison-lab)
#      HWLAB_DEBIAN_MIRROR (default http://deb.debian.org/debian)
set -euo pipefail

cache=${HWLAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hwpoison-lab}/debian
mirror=${HWLAB_DEBIAN_MIRROR:-http://deb.debian.org/debian}
max_age=${HWLAB_SUITE_MAX_AGE:-86400}

die() { echo "debian-suite: error: $*" >&2; exit 1; }
unavailable() { echo "debian-suite: error: $*" >&2; exit 3; }
usage() {
	echo "usage: $0 sysroot SUITE PKG... | kernel SUITE [MODULE...] | source SUITE | version SUITE PKG" >&2
	exit 2
}

[ $# -ge 2 ] || usage
cmd=$1 suite=$2
shift 2
case $suite in
'' | *[!a-z0-9-]*) echo "debian-suite: error: '$suite' is not a suite name" >&2; exit 2 ;;
esac
command -v apt-get >/dev/null || die "apt-get not found: this needs a Debian machine"
command -v dpkg-deb >/dev/null || die "dpkg-deb not found"

state=$cache/$suite/apt
mkdir -p "$state/lists/partial" "$state/archives/partial" "$state/etc/preferences.d" \
	"$state/etc/apt.conf.d"
: >>"$state/status"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -f "$keyring" ] || die "no $keyring (package debian-archive-keyring)"
security=${HWLAB_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
# a stable suite's newest packages (the kernel, say) are in its -updates and
# -security suites; unstable has neither
{
	echo "deb [signed-by=$keyring] $mirror $suite main"
	case $suite in
	sid | unstable | experimental) ;;
	*)
		echo "deb [signed-by=$keyring] $mirror $suite-updates main"
		echo "deb [signed-by=$keyring] $security $suite-security main"
		;;
	esac
} >"$state/sources.list"
# Everything apt reads or writes is the private state: its own sources list,
# lists, archives and an empty dpkg status (so that the closure is the
# packages' whole closure, as in a fresh chroot, not what this host has),
# and no host configuration parts. The sandbox user is whoever runs this
# (apt's _apt cannot write into a cache under a private home).
apt_opts=(
	-o "Dir::Etc::sourcelist=$state/sources.list"
	-o "Dir::Etc::sourceparts=-"
	-o "Dir::Etc::preferencesparts=$state/etc/preferences.d"
	-o "Dir::Etc::parts=$state/etc/apt.conf.d"
	-o "Dir::State=$state"
	-o "Dir::State::Lists=$state/lists"
	-o "Dir::State::status=$state/status"
	-o "Dir::Cache=$state"
	-o "Dir::Cache::archives=$state/archives"
	-o "APT::Install-Recommends=false"
	-o "APT::Get::Download-Only=true"
	-o "Debug::NoLocking=true"
	-o "APT::Sandbox::User=$(id -un)"
	-o "APT::Architecture=amd64"
	-o "APT::Architectures=amd64"
)
papt() { apt-get -q "${apt_opts[@]}" "$@"; }
pcache() { apt-cache "${apt_opts[@]}" "$@"; }

lock=$cache/$suite/lock
exec 9>"$lock"
flock 9

# refresh the lists when they are older than max_age (or absent)
stamp=$state/updated
if [ ! -f "$stamp" ] || [ $(( $(date +%s) - $(stat -c %Y "$stamp") )) -ge "$max_age" ]; then
	if ! out=$(papt update 2>&1); then
		printf '%s\n' "$out" | tail -n 5 >&2
		unavailable "cannot read the $suite suite's package lists from $mirror"
	fi
	if grep -q '^W: \|^E: ' <<<"$out"; then
		printf '%s\n' "$out" | grep '^[WE]: ' >&2
		unavailable "cannot read the $suite suite's package lists from $mirror (apt warned, above)"
	fi
	touch "$stamp"
fi

# candidate PKG: the suite's candidate version of PKG, or nothing
candidate() {
	pcache policy "$1" 2>/dev/null | sed -n 's/^ *Candidate: //p' | grep -v '(none)' || true
}

case $cmd in
version)
	[ $# -eq 1 ] || usage
	v=$(candidate "$1")
	[ -n "$v" ] || unavailable "package $1 is not in Debian $suite ($mirror)"
	echo "$v"
	;;
kernel)
	# (in a file of its own: the image, its module package, the modules'
	# closure from their .modinfo)
	. "$(dirname "$0")/debian-suite-kernel.sh"
	;;
source)
	[ $# -eq 0 ] || usage
	meta=linux-source
	[ -n "$(candidate $meta)" ] || unavailable "package $meta is not in Debian $suite ($mirror)"
	pkg=$(pcache depends "$meta" | sed -n 's/^ *Depends: \(linux-source-[0-9][^ ]*\).*/\1/p' | sed -n 1p)
	[ -n "$pkg" ] || unavailable "$meta in Debian $suite depends on no linux-source-X.Y package"
	ver=$(candidate "$pkg")
	[ -n "$ver" ] || unavailable "package $pkg is not in Debian $suite ($mirror)"
	dest=$cache/sources/$pkg-$ver
	if [ ! -f "$dest/$pkg.tar.xz" ]; then
		(cd "$state/archives" && papt download "$pkg=$ver" >&2) ||
			unavailable "cannot download $pkg $ver from Debian $suite ($mirror)"
		deb=$state/archives/${pkg}_${ver//:/%3a}_all.deb
		[ -f "$deb" ] || die "apt downloaded no archive $deb for $pkg $ver"
		tmp=$(mktemp -d "$cache/sources.XXXXXX")
		dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp" "./usr/src/$pkg.tar.xz" ||
			die "$pkg $ver (Debian $suite) holds no /usr/src/$pkg.tar.xz"
		mkdir -p "$tmp/out"
		mv "$tmp/usr/src/$pkg.tar.xz" "$tmp/out/"
		printf '%s %s %s\n' "$pkg" "$ver" "$suite" >"$tmp/out/version"
		rm -rf "$dest"
		mkdir -p "$cache/sources"
		mv "$tmp/out" "$dest"
		rm -rf "$tmp" "$deb"
		# keep the two newest of this source package (each is 150 MB)
		ls -dt "$cache/sources/$pkg"-[0-9]* | tail -n +3 | xargs -r rm -rf
	fi
	echo "$dest/$pkg.tar.xz $pkg $ver"
	;;
sysroot)
	[ $# -ge 1 ] || usage
	for p in "$@"; do
		[ -n "$(candidate "$p")" ] || unavailable "package $p is not in Debian $suite ($mirror)"
	done
	# the closure as apt would install it into an empty root: "Inst NAME (VERSION ..."
	if ! sim=$(papt -s install "$@" 2>&1); then
		printf '%s\n' "$sim" | grep '^E: \| : Depends' >&2 || true
		unavailable "the closure of $* cannot be resolved in Debian $suite"
	fi
	pairs=$(sed -n 's/^Inst \([^ ]*\) (\([^ ]*\) .*/\1=\2/p' <<<"$sim" | sort)
	[ -n "$pairs" ] || die "apt resolved no packages for $*"
	key=$(printf '%s\n' "$suite" "$@" -- "$pairs" | sha256sum | cut -c1-16)
	root=$cache/$suite/root-$key
	if [ ! -f "$root/.hwlab-versions" ]; then
		# the archives are cached by file name (name_version_arch.deb)
		# shellcheck disable=SC2086
		(cd "$state/archives" && papt download $pairs >&2) ||
			unavailable "cannot download the closure of $* from Debian $suite ($mirror)"
		tmp=$(mktemp -d "$cache/$suite/root.XXXXXX")
		for pv in $pairs; do
			name=${pv%%=*} ver=${pv#*=}
			deb=$state/archives/${name}_${ver//:/%3a}_amd64.deb
			[ -f "$deb" ] || deb=$state/archives/${name}_${ver//:/%3a}_all.deb
			[ -f "$deb" ] || die "apt downloaded no archive for $name $ver"
			dpkg-deb -x "$deb" "$tmp"
		done
		{
			echo "# Debian $suite, $(date -u +%Y-%m-%dT%H:%M:%SZ), asked for: $*"
			printf '%s\n' "$pairs"
		} >"$tmp/.hwlab-versions"
		rm -rf "$root"
		mv "$tmp" "$root"
		# keep the two newest sysroots of this suite
		ls -dt "$cache/$suite"/root-* | tail -n +3 | xargs -r rm -rf
	fi
	echo "$root"
	;;
*) usage ;;
esac
