# Guest RAM on 1 GiB hugetlb pages (--backing hugetlb-1g; issue #20). The
# outer VM reserves three at boot (scenarios.table: -m 7G, hugepagesz=1G
# hugepages=3): memblock needs a wholly free 1 GiB-aligned range for each,
# and QEMU's layout leaves none below 4 GiB (its initrd copy ends at 2 GiB,
# the e820 map ends 128 KiB short of 3 GiB) and the last GiB above 4 GiB to
# the kernel's early allocations, so three need 4 GiB above 4 GiB. At
# runtime alloc_contig_pages() found one in a 4 GiB outer VM. The bare-metal
# guest gets 2 GiB, two 1 GiB pages: its code, page tables and the first GiB
# of its working set in the first, the last 4 MiB of the working set (GPA
# 0x40000000..0x40400000, 1024 pages) in the second, which is poisoned.
# Losing the page that holds a guest's code is fatal to any guest; losing
# the other is not. Each run costs one of the three pages (memory_failure()
# dissolves it): two runs, then the shortage messages.
. /hwlab/scenarios/_lib.sh

gig=/sys/kernel/mm/hugepages/hugepages-1048576kB
# each run fills and checks 1 GiB twice and the page run takes 1024 ARs
# under nested TCG: a minute measured, more than 120 s on a busy machine
VMM_TIMEOUT=${VMM_TIMEOUT:-300}
echo "  outer: $(grep MemTotal /proc/meminfo | tr -s ' '), pdpe1gb on $(grep -c pdpe1gb /proc/cpuinfo) CPU(s)"
dmesg | grep -E 'HugeTLB|hugepage|gigantic' | sed 's/^/  dmesg: /'

# show_pool : the 1 GiB pool and what the allocator has free, for the log
show_pool() {
	echo "  1 GiB pool: nr $(cat $gig/nr_hugepages 2>/dev/null) free $(cat $gig/free_hugepages 2>/dev/null)"
	sed 's/^/  buddyinfo: /' /proc/buddyinfo
}
show_pool

if [ ! -d $gig ]; then
	fail gig-pool "the outer kernel has no 1 GiB hugetlb pool ($gig; the CPU needs pdpe1gb)"
	finish
fi
nr=$(cat $gig/nr_hugepages)
if [ "$nr" -ne 3 ]; then
	fail gig-pool "the outer kernel reserved $nr of the three 1 GiB pages hugepages=3 asked for at boot (dmesg above)"
	finish
fi
pass gig-pool "three 1 GiB hugetlb pages reserved at boot ($gig)"

# --- late kill, the guest's default --mce-lsb extent: one machine check
# for the whole GiB. The VMM poisons GPA 0x40123000 through pagemap and
# debugfs corrupt-pfn after pass 1; pass 2 touches the GiB (first at
# 0x40000000) and KVM sends BUS_MCEERR_AR with si_addr_lsb 30 (patch 0001:
# the VMA's hugetlb page shift).
echo 0 >/proc/sys/vm/memory_failure_early_kill
hc0=$(hardware_corrupted_kb)
run_vmm gig-ar.log --backing hugetlb-1g --mem 2048 --passes 2 --poison-method corrupt-pfn \
	--poison-gpa 0x40123000 $GUEST
hc=$(($(hardware_corrupted_kb) - hc0))
check gig-ar-exit "1 GiB hugetlb AR: VMM exits 0 (got $vmm_rc)" test "$vmm_rc" -eq 0
# The kernel contains the page but says it failed, and answers the write
# with EBUSY: me_huge_page() dissolves the freed 1 GiB page, whose raw pages
# are freed one by one, the poisoned one kept out of the buddy allocator
# ("skip raw hwpoison page in freeing 1GB hugepage"); take_page_off_buddy()
# then finds nothing to take, and since the 6.1.y backport of "fix handling
# of dissolved but not taken off from buddy pages" that counts as MF_FAILED.
# A 2 MiB page is freed whole into buddy and taken off: Recovered
# (page_states). What shows the containment: the AR below, the page out of
# the pool and never in buddy, HardwareCorrupted.
hook=$(json_line gig-ar.log '"event":"poison_hook"' '"gpa":"0x40123000"' '"method":"corrupt-pfn"')
pfn=$(echo "$hook" | json-field - pfn)
check gig-ar-hook "corrupt-pfn of GPA 0x40123000 (pfn ${pfn:-none}): the kernel answered EBUSY" \
	sh -c "echo '$hook' | grep -qF 'Device or resource busy'"
lsb=$(json-field gig-ar.log lsb si_code=BUS_MCEERR_AR | head -n 1)
injections=$(count_lines gig-ar.log '"event":"sigbus"' '"action":"inject"')
echo "HWLAB-MEASURE hugetlb-1g-ar-lsb=${lsb:-none} injections=$injections hardware_corrupted_kb=+$hc"
check gig-ar-lsb "AR SIGBUS for a 1 GiB hugetlb page has si_addr_lsb 30 (got ${lsb:-none})" \
	test "${lsb:-0}" -eq 30
expect_count gig-ar-extent 1 gig-ar.log '"si_code":"BUS_MCEERR_AR"' '"gpa":"0x40000000","lsb":30,' \
	'"pages":262144' '"action":"inject"' '"mci_addr":"0x40000000"' '"mci_misc":"0x9e"'
# bounded: one vMCE for 262144 pages, none per page
check gig-ar-one-injection "one injection for the lost GiB (got $injections)" test "$injections" -eq 1
expect_count gig-ar-retired 1 gig-ar.log '"event":"guest_retired"' '"gpa":"0x40000000"' \
	'"pages":262144'
# the working set's 1024 pages in the lost GiB, and nothing of the first
expect_count gig-ar-done 1 gig-ar.log '"event":"guest_done"' '"pages_retired":1024' \
	'"checksum_ok":true'
expect_count gig-ar-poisoned 1 gig-ar.log '"event":"vmm_exit"' '"poisoned_pages":262144'
want="Memory failure: $pfn: recovery action for huge page: Failed"
check gig-ar-dmesg "kernel log: '$want' (contained all the same: above)" \
	sh -c "dmesg | grep -qF '$want'"
check gig-ar-hwcorrupted "HardwareCorrupted +4 kB: one raw page, of a 1 GiB page lost whole (got +$hc)" \
	test "$hc" -eq 4
# /proc/kpageflags of the raw page: HWPOISON (bit 19) set, BUDDY (bit 10) not
flags=$(dd if=/proc/kpageflags bs=8 skip=$((pfn)) count=1 2>/dev/null | od -A n -t x8 | tr -d ' ')
echo "  kpageflags of $pfn: ${flags:-unreadable}"
check gig-ar-kpageflags "the raw page is hwpoisoned and not free in buddy (kpageflags 0x${flags:-none})" \
	test -n "$flags" -a $(((0x${flags:-0} >> 19) & 1)) -eq 1 -a $(((0x${flags:-0} >> 10) & 1)) -eq 0
show_pool

# The poisoned page was dissolved (its other 262143 raw pages went back to
# the buddy allocator), the guest's other page came back to the pool: two
# are left, and a run that needs three is refused.
gig_nr=$(cat $gig/free_hugepages)
check gig-ar-pool "the pool lost the poisoned 1 GiB page only (nr $(cat $gig/nr_hugepages), free $gig_nr; want 2 and 2)" \
	test "$gig_nr" -eq 2 -a "$(cat $gig/nr_hugepages)" -eq 2
expect gig-short 1 "it needs 3 free 1 GiB pages, $gig/free_hugepages has $gig_nr (reserve them" \
	timed_vmm --backing hugetlb-1g --mem 3072 $GUEST

# --- --mce-lsb page (what a Linux guest needs): a 4 KiB machine check at
# the page the guest touched, for each page it touches. The bare-metal
# guest gets no spread: its 1024 pages in the lost GiB are 1024 ARs, one
# injection each, as many as the guest's touches and no more.
run_vmm gig-page.log --backing hugetlb-1g --mem 2048 --passes 2 --mce-lsb page \
	--poison-method corrupt-pfn --poison-gpa 0x40123000 $GUEST
check gig-page-exit "1 GiB hugetlb, --mce-lsb page: VMM exits 0 (got $vmm_rc)" test "$vmm_rc" -eq 0
injections=$(count_lines gig-page.log '"event":"sigbus"' '"action":"inject"')
echo "HWLAB-MEASURE hugetlb-1g-page injections=$injections"
expect_count gig-page-first 1 gig-page.log '"si_code":"BUS_MCEERR_AR"' \
	'"gpa":"0x40000000","lsb":30,' '"pages":262144' '"mci_addr":"0x40000000"' '"mci_misc":"0x8c"'
expect_count gig-page-each 1024 gig-page.log '"si_code":"BUS_MCEERR_AR"' '"lsb":30,' \
	'"action":"inject"' '"mci_misc":"0x8c"'
check gig-page-bounded "no injection but the 1024 ARs (got $injections)" test "$injections" -eq 1024
expect_count gig-page-done 1 gig-page.log '"event":"guest_done"' '"pages_retired":1024' \
	'"checksum_ok":true'
show_pool

# None left: the message names the pool's sysfs file and the boot option.
echo 0 >$gig/nr_hugepages
expect gig-none 1 "it needs 2 free 1 GiB pages, $gig/free_hugepages has 0 (reserve them: echo 2 > $gig/nr_hugepages, or boot with hugepagesz=1G hugepages=2)" \
	timed_vmm --backing hugetlb-1g --mem 2048 $GUEST
finish
