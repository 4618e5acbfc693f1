# Kernel patches 0011-0018 (userfaultfd's UFFDIO_POISON, v6.6 upstream): a
# VMM marks a page of a userfaultfd-registered range as lost, and a later
# access faults as a hwpoisoned page (SIGBUS BUS_MCEERR_AR, si_addr_lsb 12 or
# the huge page's 21; -EHWPOISON for GUP, which KVM turns into its own
# SIGBUS) without any page being poisoned: no memory_failure(), no
# HardwareCorrupted, no huge page lost. uffd_poison does it on an anonymous
# private range and on a MAP_HUGETLB one (its checks are listed in
# tests/integration/uffd_poison.c); this script reserves the huge pages and
# reads the kernel's log around it.
. /hwlab/scenarios/_lib.sh
# a host without it (Debian's stock kernels) skips the whole scenario, naming it
need_host uffd-poison uffd-poison "UFFDIO_POISON markers" || finish

# five 2 MiB pages for the private hugetlb mapping (reserved at mmap), one
# more so that a reservation short by one would show as a failed mmap, not a
# SIGBUS at the copy
echo 6 >/proc/sys/vm/nr_hugepages
check hugetlb-pool "6 hugetlb pages ($(cat /proc/sys/vm/nr_hugepages))" \
	test "$(cat /proc/sys/vm/nr_hugepages)" -eq 6
hp=/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages
free_before=$(cat $hp)

mark="hwlab uffd_poison start $$"
echo "$mark" >/dev/kmsg
# (a read of a page left missing would wait for a userfault forever: bounded)
timeout -s KILL "$(bound 120)" uffd_poison
rc=$?
check uffd-poison-exited "uffd_poison ran to its end (exit $rc, its failed checks; 137: killed at the bound)" \
	test "$rc" -lt 128
[ "$rc" -ge 128 ] || hwlab_failures=$((hwlab_failures + rc))
dmesg | awk -v m="$mark" 'seen; index($0, m) { seen = 1 }' >/tmp/uffd.dmesg
sed 's/^/  dmesg: /' /tmp/uffd.dmesg

# x86's do_sigbus() logs each VM_FAULT_HWPOISON(_LARGE) it turns into a
# SIGBUS: two reads of each poisoned page, anonymous and hugetlb
killing=$(grep -c 'MCE: Killing uffd_poison:[0-9]* due to hardware memory corruption fault at' \
	/tmp/uffd.dmesg)
check dmesg-sigbus "4 'MCE: Killing uffd_poison' lines, one per poisoned read (got $killing)" \
	test "$killing" -eq 4
# a marker is not a poisoned page: memory_failure() never ran
mf=$(grep -c 'Memory failure:' /tmp/uffd.dmesg)
check dmesg-no-memory-failure "no 'Memory failure:' line (got $mf)" test "$mf" -eq 0
# the hugetlb marker took no huge page: all of them free again at exit
free_after=$(cat $hp)
check hugetlb-pool-intact "free 2 MiB pages back to $free_before after exit (got $free_after)" \
	test "$free_after" -eq "$free_before"
finish
