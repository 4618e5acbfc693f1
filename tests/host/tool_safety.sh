#!/usr/bin/env bash
# hwpoison-guest's refusals (tests/integration/scenarios/tool_safety.sh)
# against a VMM on the host's own /dev/kvm. Safe here: every tool run
# writes to a fake debugfs, a plain file for hwpoison/corrupt-pfn, and
# nothing else poisons. Without a usable /dev/kvm, or when not root (the
# tool needs CAP_SYS_ADMIN for PFNs, the checks chown a file), one SKIP
# with the reason; the outer-VM scenario tool_safety runs the same checks.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/tests/lib/check.sh"
vmm=$here/build/hwlab-vmm

if [ "$(id -u)" -ne 0 ]; then
	skip tool-safety "not root: the tool reads PFNs from pagemap only as root"
	finish
fi
if ! why=$("$vmm" --check 2>&1); then
	skip tool-safety "no usable /dev/kvm on this host ($(printf '%s\n' "$why" | tail -n 1))"
	finish
fi
HWLAB_CHECK_LIB=$here/tests/lib/check.sh VMM=$vmm TOOL=$here/build/hwpoison-guest \
	GUEST=$here/build/guest.elf JSON_FIELD=$here/build/json-field PAGEMAP_PFN=$here/build/pagemap-pfn \
	bash "$here/tests/integration/scenarios/tool_safety.sh"
