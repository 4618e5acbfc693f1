# Kernel patch 0002: debugfs hwpoison/corrupt-va poisons a page by "PID VADDR",
# without pagemap, and refuses bad input with ESRCH / EFAULT / EINVAL, a page
# already poisoned with EHWPOISON, a process it may not ptrace with EPERM, the
# zero pages and memory not present (untouched, swapped out, file pages not
# mapped) with EFAULT, faulting nothing in, special mappings ([vvar], [vdso])
# with EFAULT and a page neither on the LRU nor hugetlb with EBUSY. It poisons
# hugetlb (private, shared), THP, ext2 (clean, dirty) and shmem pages, and
# applies the corrupt-filter-* files as corrupt-pfn does (corrupt_va_probe
# checks those on pages of its own).
. /hwlab/scenarios/_lib.sh
# a host without it (Debian's stock kernels) skips the whole scenario, naming it
need_host corrupt-va corrupt-va "debugfs hwpoison/corrupt-va by pid and address" || finish
va=/sys/kernel/debug/hwpoison/corrupt-va
check corrupt-va-exists "$va exists" test -e $va
echo 0 >/proc/sys/vm/memory_failure_early_kill

# for corrupt_va_probe: ext2 on /dev/ram0 (page cache), swap on /dev/ram1,
# huge pages (a private and a shared one are poisoned), as page_states has them
check ext2-mkfs "mke2fs /dev/ram0" mke2fs -q /dev/ram0
mkdir -p /mnt
check ext2-mount "mount ext2 /dev/ram0 on /mnt" mount -t ext2 /dev/ram0 /mnt
check swap-on "mkswap + swapon /dev/ram1" sh -c 'mkswap /dev/ram1 && swapon /dev/ram1'
echo 4 >/proc/sys/vm/nr_hugepages
check hugetlb-pool "4 hugetlb pages ($(cat /proc/sys/vm/nr_hugepages))" \
	test "$(cat /proc/sys/vm/nr_hugepages)" -eq 4

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
# writer without CAP_SYS_PTRACE, the same page twice, a kvm_run page,
# swapped-out and unmapped file pages; hugetlb, THP, file and shmem pages
# poisoned; the device filter
corrupt_va_probe || hwlab_failures=$((hwlab_failures + $?))

# Last: [vvar] and [vdso] refused, then new processes must still run. On a
# kernel that poisons the shared vDSO page nothing exec'd after this would
# run, so the probe reboots the VM itself when they do not. (The filter off
# whatever the probe left: a filtered vDSO page would be no refusal.)
echo 0 >/sys/kernel/debug/hwpoison/corrupt-filter-enable
corrupt_va_probe vdso || hwlab_failures=$((hwlab_failures + $?))
finish
