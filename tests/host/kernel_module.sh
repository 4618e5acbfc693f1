#!/usr/bin/env bash
# hwpoison-inject builds as a module (issue #20: "build it once as a module in
# a check"). The outer VM's kernel has CONFIG_HWPOISON_INJECT=y, and built in,
# the injector may call anything in mm/: nothing shows that it still links as
# the module most distributions ship. This builds the same series and config
# with CONFIG_MODULES=y and CONFIG_HWPOISON_INJECT=m (kernel/config-module,
# kernel/build.sh flavour "module", cached by key like the main kernel) and
# checks what modpost decided:
#   - the build succeeds with targets "bzImage modules". modpost then reads
#     vmlinux.o (the exports and their namespaces) and fails the build on a
#     symbol the module uses that is not exported, or that is exported in a
#     namespace the module does not import (an error unless
#     CONFIG_MODULE_ALLOW_MISSING_NAMESPACE_IMPORTS);
#   - modpost ran with vmlinux.o (not "vmlinux.o is missing", which turns
#     those errors into warnings) and said nothing about the module;
#   - mm/hwpoison-inject.ko exists, uses hwpoison_get_user_page and imports
#     namespace HWPOISON_INJECT (MODULE_IMPORT_NS in its .modinfo);
#   - Module.symvers has hwpoison_get_user_page exported by vmlinux with
#     EXPORT_SYMBOL_NS_GPL in namespace HWPOISON_INJECT.
# Cost: one kernel build of its own (bzImage is build.sh's proof of a build;
# the only target that adds to the modules is the final vmlinux link and the
# compressed image, under a minute). CONFIG_MODULES changes autoconf.h, so
# the main kernel's objects are not reused and ccache hits only the files it
# does not change: cold about as long as the main kernel, 566 s on an idle
# 2-core machine (docs/kernel.md), plus the module support code and modpost;
# measured 937 s on 2 cores beside a KASAN kernel build and outer VMs (load
# 4 to 6). With the key cached, under a second.
# Output: build/kernel-module/ (build.sh's copy of the image and config;
# never build/, which holds the outer VM's kernel).
# Reports through tests/lib/check.sh; exits with the number of failed checks.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/tests/lib/check.sh"
out=$here/build/kernel-module
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ns=HWPOISON_INJECT
sym=hwpoison_get_user_page

mkdir -p "$out"
HWLAB_KERNEL_FLAVOUR=module HWLAB_KERNEL_EXTRA_CONFIG="$here/kernel/config-module" \
	HWLAB_KERNEL_TARGETS="bzImage modules" "$here/kernel/build.sh" "$out" >"$tmp/build.out" 2>&1
rc=$?
sed 's/^/  | /' "$tmp/build.out"
if [ $rc -ne 0 ]; then
	fail module-build "kernel/build.sh (flavour module, CONFIG_HWPOISON_INJECT=m) exit $rc: $(
		tail -n 3 "$tmp/build.out" | tr '\n' ' ')"
	finish
fi
pass module-build "kernel/build.sh flavour module (CONFIG_HWPOISON_INJECT=m), modpost included, succeeded"

tree=$(cat "$out/kernel.tree" 2>/dev/null)
log=$(dirname "$tree")/build.log
ko=$tree/mm/hwpoison-inject.ko
check module-config "CONFIG_MODULES=y, CONFIG_HWPOISON_INJECT=m, no MODULE_ALLOW_MISSING_NAMESPACE_IMPORTS" \
	sh -c "grep -qx CONFIG_MODULES=y '$out/kernel.config' &&
		grep -qx CONFIG_HWPOISON_INJECT=m '$out/kernel.config' &&
		! grep -q '^CONFIG_MODULE_ALLOW_MISSING_NAMESPACE_IMPORTS=y' '$out/kernel.config'"
check module-ko "mm/hwpoison-inject.ko built (in $tree)" test -s "$ko"

# modpost with the kernel's exports: Module.symvers, not modules-only.symvers
# (which modpost writes when vmlinux.o is missing, with errors as warnings)
if [ -s "$log" ] && ! grep -q 'vmlinux.o is missing' "$log" && [ -s "$tree/Module.symvers" ]; then
	pass modpost-vmlinux "modpost read vmlinux.o and wrote Module.symvers"
else
	fail modpost-vmlinux "no Module.symvers, or modpost ran without vmlinux.o (see $log)"
fi
said=$(grep -E 'modpost: .*hwpoison' "$log" 2>/dev/null)
check modpost-quiet "modpost said nothing about the module${said:+: $said}" test -z "$said"

# what the module takes from the kernel, and under which namespace
nm -u "$ko" 2>/dev/null | awk '{ print $NF }' >"$tmp/undef"
check module-uses-lookup "hwpoison-inject.ko calls $sym (nm -u)" grep -qx "$sym" "$tmp/undef"
objcopy -O binary --only-section=.modinfo "$ko" "$tmp/modinfo" 2>/dev/null
imports=$(tr '\0' '\n' <"$tmp/modinfo" 2>/dev/null | sed -n 's/^import_ns=//p' | paste -sd' ')
check module-import-ns "hwpoison-inject.ko imports namespace $ns (import_ns: ${imports:-none})" \
	grep -qx "import_ns=$ns" <(tr '\0' '\n' <"$tmp/modinfo")
export_line=$(awk -F'\t' -v s="$sym" '$2 == s { print $3 " " $4 " " $5 }' "$tree/Module.symvers" 2>/dev/null)
check export-ns "Module.symvers: $sym exported by vmlinux as EXPORT_SYMBOL_NS_GPL in $ns (got: ${export_line:-not exported})" \
	test "$export_line" = "vmlinux EXPORT_SYMBOL_GPL $ns"
finish
