# hwpoison-guest poisons a running guest from outside, through the outer
# kernel's debugfs corrupt-pfn injector, and refuses bad requests clearly.
. /hwlab/scenarios/_lib.sh

echo 1 >/proc/sys/vm/memory_failure_early_kill
start_vmm early.log --passes 0 --mce-kill early $GUEST
expect tool-early 0 '"gpa":"0x612000"' hwpoison-guest $vmm_pid 0x612000
wait_for early.log '"event":"guest_retired"' '"gpa":"0x612000"'

# bad requests, against the same live VMM: exit 1 and a clear message for
# a GPA outside RAM, no debugfs, a pid that is gone, a malformed GPA
expect tool-bad-gpa 1 'is not in the guest RAM of pid' hwpoison-guest $vmm_pid 0x40000000
expect tool-no-debugfs 1 'mount debugfs' hwpoison-guest --debugfs /nonexistent $vmm_pid 0x613000
expect tool-no-pid 1 'no such process' hwpoison-guest 999999 0x613000
expect tool-bad-arg 1 'is not a guest-physical address' hwpoison-guest $vmm_pid nonsense
stop_vmm early.log
check early-vmm-exit "VMM stopped cleanly by SIGTERM (got $vmm_rc)" test "$vmm_rc" -eq 0
# The kernel sends the AO at the write; the guest keeps running meanwhile,
# so on a busy machine it may consume the page first (AR) and the AO then
# finds the page known. Either way: the AO arrived, and the guest got
# exactly one machine check for the page. (early_kill, whose poison hook
# holds the guest until the AO is queued, checks the AO injection itself.)
expect_count early-ao 1 early.log '"si_code":"BUS_MCEERR_AO"' '"gpa":"0x612000"'
expect_count early-one-mce 1 early.log '"event":"sigbus"' '"gpa":"0x612000"' '"action":"inject"'
expect_count early-retired 1 early.log '"event":"guest_retired"' '"gpa":"0x612000"' \
	'"matches_injection":true'
expect_count early-stopped 1 early.log '"event":"vmm_exit"' '"status":"stopped"'

echo 0 >/proc/sys/vm/memory_failure_early_kill
start_vmm late.log --passes 0 $GUEST
expect tool-late 0 '"gpa":"0x9ff000"' hwpoison-guest $vmm_pid 0x9ff000
wait_for late.log '"event":"guest_retired"' '"gpa":"0x9ff000"'
stop_vmm late.log
expect_count late-ar 1 late.log '"si_code":"BUS_MCEERR_AR"' '"gpa":"0x9ff000"' '"action":"inject"' \
	'"mcg_status":"0x7"'
expect_count late-retired 1 late.log '"event":"guest_retired"' '"gpa":"0x9ff000"' \
	'"matches_injection":true'
check late-gone "memslot table removed at exit" test ! -e "$(memmap_of $vmm_pid)"

# Late kill poisons a page of the boot area that the guest does not touch
# again (the GDT at 0x7000): nobody is told. Then a working-set page that the
# guest consumes, with MCE off, makes the VMM reset the guest. Rebooting
# writes the GDT again; into the poisoned page that store would be the
# VMM's own consumption of poison (exit 3). The reset maps fresh memory
# under the boot area first.
start_vmm reset.log --passes 0 --guest-no-mce --on-unrecoverable reset $GUEST
expect tool-boot-area 0 '"gpa":"0x7000"' hwpoison-guest $vmm_pid 0x7000
expect tool-workset 0 '"gpa":"0x500000"' hwpoison-guest $vmm_pid 0x500000
wait_for reset.log '"event":"reset"' '"boot":2'
# a pass of the rebooted guest: a guest_pass line after its "boot":2 log line
# (pass numbers restart, so "pass":1 alone would also match the first boot)
boot2_pass() {
	awk '/"event":"guest_log".*"boot":2/ { b = 1 } b && /"event":"guest_pass"/ { f = 1; exit }
	     END { exit !f }' reset.log
}
n=0
while ! boot2_pass && kill -0 "$vmm_pid" 2>/dev/null && [ $n -lt $((1200 * HWLAB_TIME_FACTOR)) ]; do
	sleep 0.1
	n=$((n + 1))
done
# The pages the reset gave fresh memory (0x500000; 0x7000 of the boot area)
# are marked as guest RAM like the rest, so the tool still accepts them
# (written to a fake debugfs: not poisoned again).
fake=$(mktemp -d)
mkdir "$fake/hwpoison"
: >"$fake/hwpoison/corrupt-pfn"
expect remapped-accepted 0 '"gpa":"0x500000"' hwpoison-guest --debugfs "$fake" --wait-present "$(bound 60)" \
	$vmm_pid 0x500000
expect remapped-boot-area-accepted 0 '"gpa":"0x7000"' hwpoison-guest --debugfs "$fake" $vmm_pid 0x7000
rm -rf "$fake"
stop_vmm reset.log
expect_count boot-area-reset 1 reset.log '"event":"reset"' '"boot":2'
check boot-area-boot2-pass "the rebooted guest completed a pass" boot2_pass
check boot-area-runs-on "the VMM ran on and stopped on SIGTERM (exit $vmm_rc)" test "$vmm_rc" -eq 0
expect_count boot-area-no-fatal 0 reset.log '"action":"fatal"'
expect_count boot-area-exit 1 reset.log '"event":"vmm_exit"' '"status":"stopped"' '"resets":1'
finish
