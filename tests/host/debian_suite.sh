#!/usr/bin/env bash
# scripts/debian-suite.sh and scripts/stock-kernels.sh (issue #23: newer
# Debian suites without touching the host). Host side, needs the network
# (deb.debian.org) and a few seconds: the suites' lists are cached.
#   - a suite's candidate version is had from the private lists, and the
#     host's own apt state is not what answered (its dpkg status and lists
#     are unchanged);
#   - a package the suite lacks, and a mirror that cannot be reached, end
#     with exit 3 and a message naming the package or the suite (the status
#     the checks that need them skip on); a bad suite name is a usage error;
#   - the stock kernels the compare image carries are real bzImages with
#     their package and version, or an "unavailable" file with the reason.
# Reports through tests/lib/check.sh; exits with the number of failed checks.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/tests/lib/check.sh"
ds=$here/scripts/debian-suite.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

host_state() { { md5sum /var/lib/dpkg/status; ls -l --time-style=+%s /var/lib/apt/lists/; } 2>/dev/null | md5sum; }
before=$(host_state)
v=$("$ds" version sid qemu-system-x86 2>"$tmp/err")
check sid-qemu-version "sid has a qemu-system-x86 candidate ($v)" test -n "$v"
check host-apt-untouched "the host's dpkg status and apt lists are as they were" test "$(host_state)" = "$before"

"$ds" version sid hwlab-no-such-package >"$tmp/out" 2>"$tmp/err"
rc=$?
check missing-package-rc "a package sid lacks: exit 3 (got $rc)" test "$rc" -eq 3
check missing-package-message "the message names the package and the suite: $(cat "$tmp/err")" \
	grep -q 'package hwlab-no-such-package is not in Debian sid' "$tmp/err"
"$ds" sysroot trixie hwlab-no-such-package >"$tmp/out" 2>"$tmp/err"
rc=$?
check missing-sysroot-rc "a sysroot of a package trixie lacks: exit 3, no path printed (got $rc)" \
	test "$rc" -eq 3 -a ! -s "$tmp/out"

HWLAB_CACHE=$tmp/cache HWLAB_DEBIAN_MIRROR=http://127.0.0.1:9/debian \
	HWLAB_DEBIAN_SECURITY_MIRROR=http://127.0.0.1:9/debian-security \
	"$ds" version trixie qemu-system-x86 >"$tmp/out" 2>"$tmp/err"
rc=$?
check unreachable-mirror "an unreachable mirror: exit 3 naming the suite (got $rc: $(tail -n 1 "$tmp/err"))" \
	sh -c "[ $rc -eq 3 ] && grep -q \"cannot read the trixie suite's package lists\" '$tmp/err'"

"$ds" version 'sid;rm' qemu-system-x86 >/dev/null 2>"$tmp/err"
rc=$?
check bad-suite "a suite name that is not one: a usage error (exit 2, got $rc)" test "$rc" -eq 2

# the stock kernels: what make initramfs packed (build/stock), else skip
for suite in bookworm trixie sid; do
	d=$here/build/stock/$suite
	if [ -f "$d/unavailable" ]; then
		skip "stock-$suite" "$(cat "$d/unavailable")"
	elif [ -f "$d/vmlinuz" ]; then
		desc=$(file -b "$d/vmlinuz")
		check "stock-$suite" "$(cat "$d/version"): $desc" \
			bash -c "[[ '$desc' == 'Linux kernel x86 boot executable bzImage'* ]] &&
			       grep -q ' $suite\$' '$d/version'"
	else
		skip "stock-$suite" "no build/stock/$suite (make initramfs)"
	fi
done
finish
