# Guest RAM on 2 MiB hugetlb pages and on THP. Poisoning one 4 KiB page of a
# hugetlb page poisons all of it; the VMM poisons the whole extent the
# kernel's si_addr_lsb tells it about, and the guest retires all 512 pages.
. /hwlab/scenarios/_lib.sh

# Too few free huge pages (none, then half of what 16 MiB needs): the VMM says
# how many it needs and exits 1. With MAP_NORESERVE it died of SIGBUS at its
# first touch of guest RAM instead, before its handler existed (rc 135).
echo 0 >/proc/sys/vm/nr_hugepages
expect hugetlb-none 1 'it needs 8 free 2 MiB pages, /sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages has 0 (reserve them: echo 8 > /proc/sys/vm/nr_hugepages)' \
	timed_vmm --backing hugetlb $GUEST
echo 4 >/proc/sys/vm/nr_hugepages
expect hugetlb-short 1 'has 4 (reserve them' timed_vmm --backing hugetlb $GUEST

echo 16 >/proc/sys/vm/nr_hugepages

echo 0 >/proc/sys/vm/memory_failure_early_kill
run_vmm tlb-ar.log --backing hugetlb --poison-gpa 0x523000 $GUEST
check hugetlb-ar-exit "hugetlb AR: VMM exits 0 (got $vmm_rc)" test "$vmm_rc" -eq 0
# (KVM's AR for the vCPU's access, not the one a 6.11+ kernel sends the
# hook's madvise: "origin":"madvise", no recipient)
lsb=$(json-field tlb-ar.log lsb si_code=BUS_MCEERR_AR recipient=guest | head -n 1)
ars=$(count_lines tlb-ar.log '"si_code":"BUS_MCEERR_AR"' '"action":"inject"')
echo "HWLAB-MEASURE hugetlb-ar-lsb=$lsb ar-events=$ars"
if host_has kvm-hugetlb-lsb; then
	check hugetlb-ar-lsb "AR SIGBUS for a hugetlb page has si_addr_lsb 21 (got ${lsb:-none})" \
		test "${lsb:-0}" -eq 21
	expect_count hugetlb-ar-extent 1 tlb-ar.log '"si_code":"BUS_MCEERR_AR"' '"gpa":"0x400000"' \
		'"pages":512' '"mci_misc":"0x95"'
else
	# without patch 0001 KVM says 4 KiB for the lost 2 MiB: the guest
	# learns of the 512 pages one machine check (one exit, one SIGBUS)
	# at a time, as it touches them
	check hugetlb-ar-lsb-12 "host ${HWLAB_HOST:-?} lacks kvm-hugetlb-lsb: KVM's AR says si_addr_lsb 12 for the 2 MiB page (got ${lsb:-none})" \
		test "${lsb:-0}" -eq 12
	check hugetlb-ar-each-4k "so one AR per 4 KiB page the guest touches: 512 (got $ars)" test "$ars" -eq 512
fi
expect_count hugetlb-ar-done 1 tlb-ar.log '"event":"guest_done"' '"pages_retired":512' \
	'"checksum_ok":true'
expect_count hugetlb-ar-poisoned 1 tlb-ar.log '"event":"vmm_exit"' '"poisoned_pages":512'

# For a Linux guest, which ignores an MCi_MISC LSB above 12: one 4 KiB
# machine check per page the guest touches, at the page it touched.
run_vmm tlb-page.log --backing hugetlb --mce-lsb page --poison-gpa 0x523000 $GUEST
check hugetlb-page-exit "hugetlb, --mce-lsb page: VMM exits 0 (got $vmm_rc)" test "$vmm_rc" -eq 0
if host_has kvm-hugetlb-lsb; then
	expect_count hugetlb-page-first 1 tlb-page.log '"si_code":"BUS_MCEERR_AR"' '"gpa":"0x400000"' \
		'"pages":512' '"mci_addr":"0x400000"' '"mci_misc":"0x8c"'
fi
expect_count hugetlb-page-each 512 tlb-page.log '"si_code":"BUS_MCEERR_AR"' '"action":"inject"' \
	'"mci_misc":"0x8c"'
expect_count hugetlb-page-mid 1 tlb-page.log '"event":"guest_retired"' '"gpa":"0x523000"' '"pages":1' \
	'"matches_injection":true'
expect_count hugetlb-page-done 1 tlb-page.log '"event":"guest_done"' '"pages_retired":512' \
	'"checksum_ok":true'

echo 1 >/proc/sys/vm/memory_failure_early_kill
run_vmm tlb-ao.log --backing hugetlb --mce-kill early --poison-gpa 0x523000 $GUEST
check hugetlb-ao-exit "hugetlb AO: VMM exits 0 (got $vmm_rc)" test "$vmm_rc" -eq 0
expect_count hugetlb-ao-extent 1 tlb-ao.log '"si_code":"BUS_MCEERR_AO"' '"gpa":"0x400000"' \
	'"lsb":21' '"pages":512' '"action":"inject"' '"mci_misc":"0x95"'
expect_count hugetlb-ao-done 1 tlb-ao.log '"event":"guest_done"' '"pages_retired":512' \
	'"checksum_ok":true'

# read() of a hugetlbfs page with one poisoned subpage returns the other
# 511 (kernel 8/10-10/10): what the salvage below is built on
echo 0 >/proc/sys/vm/memory_failure_early_kill
echo 17 >/proc/sys/vm/nr_hugepages
if need_host hugetlb-read-hwpoison hugetlb-read "read() returns a poisoned huge page's 511 healthy subpages"; then
	if host_has madvise-hwpoison-ar; then sigbus_from=madvise; else sigbus_from=access; fi
	hugetlb_read "$sigbus_from" || hwlab_failures=$((hwlab_failures + $?))
fi
# salvage_lost NAME LOG : on a host whose read() of a poisoned huge page
# fails whole (before v6.6), the salvage says so, naming the commit, and the
# guest is told of all 512 pages, as for private hugetlb RAM
salvage_lost() {
	expect_count "$1-unavailable" 1 "$2" '"event":"hugetlb_salvage"' '"gpa":"0x400000"' \
		'"status":"unavailable"' '"pages_poisoned":512' 'the kernel lacks 38c1ddbde6c6'
	expect_count "$1-done-512" 1 "$2" '"event":"guest_done"' '"pages_retired":512' '"checksum_ok":true'
}

# salvage_marker NAME LOG : the salvage's own poison marker (MADV_HWPOISON of
# its scratch page) is named and ignored, never taken for the VMM consuming
# poison: since 6.11 the kernel answers the salvaging thread with an AR from
# inside madvise, late kill or early; before, only an early-kill VMM heard
# of it, by an AO
salvage_marker() {
	if host_has madvise-hwpoison-ar; then
		expect_count "$1-marker" 1 "$2" '"si_code":"BUS_MCEERR_AR"' \
			'"origin":"salvage_marker"' '"action":"ignore"' \
			'the poison marker a salvage made for GPA 0x523000'
	elif [ "$1" = hugetlb-salvage-ao ]; then
		expect_count "$1-marker" 1 "$2" '"si_code":"BUS_MCEERR_AO"' '"action":"ignore"' \
			'the poison marker a salvage made for GPA 0x523000'
	fi
}

# --backing hugetlb-shared: guest RAM is a hugetlbfs memfd mapped shared, and
# the lost 2 MiB page is salvaged (hugetlb_salvage.h): its 511 healthy
# subpages read back and moved in, the bad one poisoned again. The guest
# retires 1 page, not 512, and its checksum over the rest still holds.
echo 17 >/proc/sys/vm/nr_hugepages
run_vmm tlb-salvage.log --backing hugetlb-shared --poison-gpa 0x523000 $GUEST
check hugetlb-salvage-exit "hugetlb-shared AR: VMM exits 0 (got $vmm_rc)" test "$vmm_rc" -eq 0
if ! host_has hugetlb-read-hwpoison; then
	salvage_lost hugetlb-salvage tlb-salvage.log
else
expect_count hugetlb-salvage-kept 1 tlb-salvage.log '"event":"hugetlb_salvage"' '"gpa":"0x400000"' \
	'"status":"done"' '"pages_kept":511' '"pages_poisoned":1' '"poisoned":["0x523000"]'
expect_count hugetlb-salvage-ar-4k 1 tlb-salvage.log '"si_code":"BUS_MCEERR_AR"' '"gpa":"0x523000"' \
	'"pages":1' '"action":"inject"'
expect_count hugetlb-salvage-done 1 tlb-salvage.log '"event":"guest_done"' '"pages_retired":1' \
	'"checksum_ok":true'
expect_count hugetlb-salvage-poisoned 1 tlb-salvage.log '"event":"vmm_exit"' '"poisoned_pages":1'
salvage_marker hugetlb-salvage tlb-salvage.log
fi

# early kill: the AO for the huge page is salvaged in the monitor, the guest
# is told of the one bad page; the salvage's own poison marker is named
# and ignored (salvage_marker)
echo 1 >/proc/sys/vm/memory_failure_early_kill
echo 17 >/proc/sys/vm/nr_hugepages
run_vmm tlb-salvage-ao.log --backing hugetlb-shared --mce-kill early --poison-gpa 0x523000 $GUEST
check hugetlb-salvage-ao-exit "hugetlb-shared AO: VMM exits 0 (got $vmm_rc)" test "$vmm_rc" -eq 0
if ! host_has hugetlb-read-hwpoison; then
	salvage_lost hugetlb-salvage-ao tlb-salvage-ao.log
else
expect_count hugetlb-salvage-ao-kept 1 tlb-salvage-ao.log '"event":"hugetlb_salvage"' \
	'"gpa":"0x400000"' '"status":"done"' '"pages_kept":511' '"poisoned":["0x523000"]'
expect_count hugetlb-salvage-ao-4k 1 tlb-salvage-ao.log '"si_code":"BUS_MCEERR_AO"' \
	'"gpa":"0x523000"' '"pages":1' '"action":"inject"'
salvage_marker hugetlb-salvage-ao tlb-salvage-ao.log
expect_count hugetlb-salvage-ao-done 1 tlb-salvage-ao.log '"event":"guest_done"' \
	'"pages_retired":1' '"checksum_ok":true'
fi

echo 0 >/proc/sys/vm/memory_failure_early_kill
run_vmm thp.log --backing thp --poison-gpa 0x523000 $GUEST
check thp-exit "THP AR: VMM exits 0 (got $vmm_rc)" test "$vmm_rc" -eq 0
# memory_failure() splits the THP first, so only the 4 KiB page is lost.
expect_count thp-ar-4k 1 thp.log '"si_code":"BUS_MCEERR_AR"' '"gpa":"0x523000"' '"lsb":12' \
	'"pages":1' '"action":"inject"'
expect_count thp-done 1 thp.log '"event":"guest_done"' '"pages_retired":1' '"checksum_ok":true'
finish
