#!/usr/bin/env bash
# A bad environment gets a clear message and a non-zero exit: no kernel
# source, no qemu, a patch that does not apply, a config option Kconfig
# drops, a guest that hangs or panics, an unknown scenario.
# Each is an "expect NAME RC MESSAGE COMMAND..." of tests/lib/check.sh:
# the exit status and a fixed string in the command's stdout/stderr.
# Exits with the number of failed checks.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
# the kernel build script under test, named once
build_kernel=$here/kernel/build.sh
. "$here/tests/lib/check.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

expect no-kernel-source 1 'no kernel source at /nonexistent.tar.xz' \
	env HWLAB_KERNEL_TARBALL=/nonexistent.tar.xz HWLAB_CACHE="$tmp/cache" \
	"$build_kernel" "$tmp/out-dir"

# A kernel dir (kernel/BASE's shape: series, a config of its own,
# patches/) whose one patch cannot apply, and one whose config asks for
# an option with an unmet dependency (X86_MCE_AMD needs PCI).
mkdir -p "$tmp/badpatch/patches" "$tmp/badconfig/patches"
cp "$here/kernel/config" "$tmp/badpatch/config"
cat >"$tmp/badpatch/patches/0001-broken.patch" <<'PATCH'
From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: Test <test@example.invalid>
Subject: [PATCH] broken: touches a line that is not there

Signed-off-by: Test <test@example.invalid>
---
 Makefile | 2 +-
 1 file changed, 1 insertion(+), 1 deletion(-)

diff --git a/Makefile b/Makefile
--- a/Makefile
+++ b/Makefile
@@ -1,3 +1,3 @@
-THIS LINE IS NOT IN THE KERNEL MAKEFILE
+NOR IS THIS ONE
 VERSION = 6
 PATCHLEVEL = 1
PATCH
echo patches/0001-broken.patch >"$tmp/badpatch/series"
expect failing-patch 1 'patch 0001-broken.patch does not apply' \
	env HWLAB_KERNEL_DIR="$tmp/badpatch" HWLAB_CACHE="$tmp/cache" \
	"$build_kernel" "$tmp/out-dir"
rm -rf "$tmp/cache"

{ cat "$here/kernel/config"; echo CONFIG_X86_MCE_AMD=y; } >"$tmp/badconfig/config"
: >"$tmp/badconfig/series"
expect missing-config-option 1 'missing: CONFIG_X86_MCE_AMD=y (got: not set)' \
	env HWLAB_KERNEL_DIR="$tmp/badconfig" HWLAB_CACHE="$tmp/cache" \
	"$build_kernel" "$tmp/out-dir"
rm -rf "$tmp/cache"

echo 'series-name-without-file.patch' >"$tmp/badconfig/series"
expect series-names-missing-patch 1 'series-name-without-file.patch does not exist' \
	env HWLAB_KERNEL_DIR="$tmp/badconfig" HWLAB_CACHE="$tmp/cache" \
	"$build_kernel" "$tmp/out-dir"
expect unknown-kernel-base 1 "HWLAB_KERNEL_BASE must be 6.1, 6.12 or 7.2, not '5.10'" \
	env HWLAB_KERNEL_BASE=5.10 HWLAB_CACHE="$tmp/cache" "$build_kernel" "$tmp/out-dir"

expect no-qemu 2 'qemu-system-nonexistent not found' \
	env QEMU=qemu-system-nonexistent "$here/outer-qemu/boot.sh" smoke "$tmp/boot.log" 60
expect boot-timeout 124 'did not finish within 1s' \
	"$here/outer-qemu/boot.sh" smoke "$tmp/boot.log" 1
expect kernel-panic 125 'the outer kernel panicked' \
	env HWLAB_APPEND=rdinit=/nonexistent "$here/outer-qemu/boot.sh" smoke "$tmp/boot.log" 60
expect unknown-scenario 2 'HWLAB-ERROR unknown scenario' \
	sh -c "'$here/outer-qemu/boot.sh' no-such-scenario '$tmp/boot.log' 60; rc=\$?; cat '$tmp/boot.log'; exit \$rc"
finish
