# Kernel patch 0002: debugfs hwpoison/corrupt-va poisons a page by "PID VADDR",
# without pagemap, and refuses bad input with ESRCH / EFAULT / EINVAL, a page
# already poisoned with EHWPOISON, a process it may not ptrace with EACCES, and
# the zero pages and memory not present with EFAULT, faulting nothing in
# (corrupt_va_probe checks those on pages of its own).
. /hwlab/scenarios/_lib.sh
va=/sys/kernel/debug/hwpoison/corrupt-va
check corrupt-va-exists "$va exists" test -e $va
echo 0 >/proc/sys/vm/memory_failure_early_kill

start_vmm va.log --passes 0 $GUEST
hva=$(sed -n 's/^0 [^ ]* [^ ]* \(0x[0-9a-f]*\) .*/\1/p' "$(memmap_of $vmm_pid)")
# GPA 0x700000 is hva + 0x700000 in the single slot
page=$(printf '%#x' $((hva + 0x700000)))
echo "$vmm_pid $page" >$va
check corrupt-va-write "echo '$vmm_pid $page' > corrupt-va succeeds" test $? -eq 0
wait_for va.log '"event":"guest_retired"' '"gpa":"0x700000"'
# the page is now a hwpoison entry in the VMM's page table
expect corrupt-va-ehwpoison 1 'errno EHWPOISON' corrupt_va_probe write "$vmm_pid $page"

sh -c "echo '999999 $page' >$va" 2>esrch.err
check corrupt-va-esrch "unknown pid: ESRCH" grep -q 'No such process' esrch.err
sh -c "echo '$vmm_pid 0x10' >$va" 2>efault.err
check corrupt-va-efault "unmapped address: EFAULT" grep -q 'Bad address' efault.err
sh -c "echo 'garbage' >$va" 2>einval.err
check corrupt-va-einval "malformed input: EINVAL" grep -q 'Invalid argument' einval.err

expect tool-corrupt-va 0 '"gpa":"0x733000"' hwpoison-guest --corrupt-va $vmm_pid 0x733000
wait_for va.log '"event":"guest_retired"' '"gpa":"0x733000"'
stop_vmm va.log
expect_count va-ar-1 1 va.log '"si_code":"BUS_MCEERR_AR"' '"gpa":"0x700000"' '"action":"inject"'
expect_count va-ar-2 1 va.log '"si_code":"BUS_MCEERR_AR"' '"gpa":"0x733000"' '"action":"inject"'
expect_count va-retired 2 va.log '"event":"guest_retired"' '"matches_injection":true'
check va-vmm-exit "VMM stopped cleanly (got $vmm_rc)" test "$vmm_rc" -eq 0

# the huge zero page, untouched anon and shmem memory, malformed input, a
# writer without CAP_SYS_PTRACE, the same page twice
corrupt_va_probe || hwlab_failures=$((hwlab_failures + $?))
finish
