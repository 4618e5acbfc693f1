#!/usr/bin/env bash
# tests/host/kernel_splats.sh on sample console logs (no VM): a clean log
# passes, also with decoys (KASAN's boot line, a Linux guest's own BUG
# echoed as a "  con: " line, a check named after a warning); a log with
# one of each kind of splat fails one check per splat, each quoting the
# splat's first line; a splat repeated (other pid, other time) and the
# lines inside one (VM_BUG_ON_PAGE then "kernel BUG at") count once. On a
# lockdep kernel, lockdep must still be on at the end (HWLAB-LOCKDEP).
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/tests/lib/check.sh"
scan=$here/tests/host/kernel_splats.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/clean.log" <<'EOF'
[    0.000000] Linux version 6.1.0 (root@host) #1 SMP PREEMPT_DYNAMIC
[    0.245895] Lock dependency validator: Copyright (c) 2006 Red Hat, Inc., Ingo Molnar
[    0.512345] kasan: KernelAddressSanitizer initialized (generic)
[    1.234567] Run /init as init process
HWLAB-BEGIN scenario=sample kernel=6.1.0
  con: [    3.000000] BUG: kernel NULL pointer dereference, address: 0000000000000000
  con: [    3.000001] WARNING: CPU: 0 PID: 1 at mm/inner.c:1 f+0x1/0x2
HWLAB-CHECK PASS warning-words: the tool said WARNING: nothing
[    4.000000] Memory failure: 0x1234: recovery action for dirty LRU page: Recovered
HWLAB-LOCKDEP debug_locks=1 lock_classes=1234 dependencies=9876 chains=555
HWLAB-EXIT rc=0
EOF
# the same boot, ended before init could report lockdep's state
grep -v '^HWLAB-LOCKDEP\|^HWLAB-EXIT' "$tmp/clean.log" >"$tmp/cut.log"

cat >"$tmp/splats.log" <<'EOF'
[    0.245895] Lock dependency validator: Copyright (c) 2006 Red Hat, Inc., Ingo Molnar
[    1.234567] Run /init as init process
HWLAB-BEGIN scenario=sample kernel=6.1.0
[    5.000000] ======================================================
[    5.000001] WARNING: possible circular locking dependency detected
[    5.000002] 6.1.0 #1 Not tainted
[    5.000003] ------------------------------------------------------
[    5.000004] hwlab-vmm/97 is trying to acquire lock:
[    5.000005] ffff888004a1c0d8 (&mm->mmap_lock){++++}-{3:3}, at: kvm_send_hwpoison_signal+0x1f/0x90
[    5.000006] 
[    5.000007] but task is already holding lock:
[    6.000000] BUG: sleeping function called from invalid context at mm/memory-failure.c:2093
[    6.000001] in_atomic(): 1, irqs_disabled(): 0, non_block: 0, pid: 98, name: sh
[    6.000002] preempt_count: 1, expected: 0
[    7.000000] ================================
[    7.000001] WARNING: inconsistent lock state
[    7.000002] 6.1.0 #1 Not tainted
[    7.000003] --------------------------------
[    7.000004] inconsistent {IN-SOFTIRQ-W} -> {SOFTIRQ-ON-W} usage.
[    7.000005] sh/100 [HC0[0]:SC0[0]:HE1:SE1] takes:
[    7.000006] ffff888004a1c0d8 (&hugetlb_lock){+.?.}-{2:2}, at: get_huge_page_for_hwpoison+0x1f/0x60
[    8.000000] page:ffffea0000123400 refcount:0 mapcount:0 mapping:0000000000000000 index:0x0 pfn:0x48d0
[    8.000001] flags: 0x100000000000000(node=0|zone=1)
[    8.000002] page dumped because: VM_BUG_ON_PAGE(page_ref_count(page) == 0)
[    8.000003] ------------[ cut here ]------------
[    8.000004] kernel BUG at include/linux/mm.h:780!
[    8.000005] invalid opcode: 0000 [#1] PREEMPT SMP NOPTI
[    9.000000] ------------[ cut here ]------------
[    9.000001] WARNING: CPU: 1 PID: 99 at mm/memory-failure.c:1200 hwpoison_inject+0x40/0x80
[    9.000002] Modules linked in:
[   10.000000] ==================================================================
[   10.000001] BUG: KASAN: slab-use-after-free in memory_failure+0x123/0x456
[   10.000002] Read of size 8 at addr ffff888004a1c0d8 by task sh/101
[   11.000000] ------------[ cut here ]------------
[   11.000001] WARNING: CPU: 0 PID: 120 at mm/memory-failure.c:1200 hwpoison_inject+0x40/0x80
[   11.000002] Modules linked in:
HWLAB-LOCKDEP debug_locks=0 lock_classes=1234 dependencies=9876 chains=555
HWLAB-EXIT rc=0
EOF

out=$("$scan" "$tmp/clean.log" sample)
rc=$?
printf '%s\n' "$out" | sed 's/^/  | /'
check clean-passes "a clean log (with decoys): exit 0, no splat, lockdep on, no FAIL" \
	test "$rc" -eq 0 -a "$(grep -c '^HWLAB-CHECK PASS sample-no-kernel-splat: ' <<<"$out")" -eq 1 \
	-a "$(grep -c '^HWLAB-CHECK PASS sample-lockdep-on: lock checking still on at the end: debug_locks=1 ' <<<"$out")" -eq 1 \
	-a "$(grep -c '^HWLAB-CHECK FAIL ' <<<"$out")" -eq 0

out=$("$scan" "$tmp/cut.log" sample)
rc=$?
printf '%s\n' "$out" | sed 's/^/  | /'
check cut-fails "a lockdep boot cut short: lockdep-on fails (exit $rc)" \
	test "$rc" -eq 1 -a "$(grep -c '^HWLAB-CHECK FAIL sample-lockdep-on: a lockdep kernel, but no HWLAB-LOCKDEP line' <<<"$out")" -eq 1

out=$("$scan" "$tmp/splats.log" sample)
rc=$?
printf '%s\n' "$out" | sed 's/^/  | /'
check splats-fail "six splats and lockdep off: exit 7, seven FAILs, no PASS (got exit $rc)" \
	test "$rc" -eq 7 -a "$(grep -c '^HWLAB-CHECK FAIL ' <<<"$out")" -eq 7 \
	-a "$(grep -c '^HWLAB-CHECK PASS ' <<<"$out")" -eq 0
check lockdep-off "debug_locks=0 at the end fails" \
	grep -q '^HWLAB-CHECK FAIL sample-lockdep-on: lockdep turned itself off' <<<"$out"
# quotes N TEXT: splat N's check quotes TEXT (its first line, the next ones)
quotes() {
	[[ $(sed -n "s/^HWLAB-CHECK FAIL sample-kernel-splat-$1: //p" <<<"$out") == *"$2"* ]]
}
check splat-circular "lockdep cycle quoted with its lock" quotes 1 \
	'WARNING: possible circular locking dependency detected | 6.1.0 #1 Not tainted | hwlab-vmm/97 is trying to acquire lock: | ffff888004a1c0d8 (&mm->mmap_lock)'
check splat-sleeping "might_sleep quoted" quotes 2 \
	'BUG: sleeping function called from invalid context at mm/memory-failure.c:2093 | in_atomic(): 1'
check splat-inconsistent "inconsistent lock state quoted" quotes 3 'WARNING: inconsistent lock state'
check splat-vm-bug "VM_BUG_ON_PAGE and its kernel BUG: one splat" quotes 4 \
	'page dumped because: VM_BUG_ON_PAGE(page_ref_count(page) == 0) | kernel BUG at include/linux/mm.h:780!'
check splat-warn-twice "a WARN from two pids: one splat, seen 2 times" quotes 5 \
	'WARNING: CPU: 1 PID: 99 at mm/memory-failure.c:1200 hwpoison_inject+0x40/0x80 | Modules linked in:'
check splat-warn-count "... and says so" quotes 5 '(seen 2 times)'
check splat-kasan "KASAN report quoted" quotes 6 'BUG: KASAN: slab-use-after-free in memory_failure+0x123/0x456'

expect no-log 1 'no console log' "$scan" "$tmp/missing.log" sample
finish
