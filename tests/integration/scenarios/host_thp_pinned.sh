# Guest RAM on a THP the host kernel cannot split (docs/host-behaviour.md):
# something holds a reference to it, as a device doing DMA to guest RAM does
# (VFIO pins it); here hwlab-vmm --pin-gpa, the page vmspliced into a pipe the
# VMM keeps. memory_failure() splits a THP before it isolates the poisoned
# page. When the split fails,
#  - 6.1 gives up ("unsplit thp: Ignored", corrupt-pfn EBUSY): no signal, the
#    page stays mapped and in use;
#  - since v6.11 (thp-unsplittable-sigbus) it signals the folio at once
#    ("unsplit thp: Failed", EHWPOISON): an AO with si_addr_lsb 21 at the
#    poisoned page to an early-kill VMM, nothing to a late-kill one; the folio
#    stays mapped, its other 511 pages intact.
# hwlab-vmm tells its guest the one page at si_addr ("unsplit_thp":true), not
# 2 MiB. In both kernels the guest then runs on: the page was never unmapped,
# so no access faults (on real hardware, reading the bad line would raise a
# machine check instead).
. /hwlab/scenarios/_lib.sh
. /hwlab/scenarios/_host.sh

gpa=0x523000
if host_has thp-unsplittable-sigbus; then
	want_mf=unsplit_thp:Failed want_inj=Memory_page_has_hardware_error
else
	want_mf=unsplit_thp:Ignored want_inj=Device_or_resource_busy
fi

for mode in early late; do
	c=thp-$mode
	if [ $mode = early ]; then ek=1 kill_opt="--mce-kill early"; else ek=0 kill_opt=; fi
	echo $ek >/proc/sys/vm/memory_failure_early_kill
	hc0=$(hardware_corrupted_kb)
	start_vmm $c.log --backing thp --pin-gpa $gpa --passes 0 $kill_opt $GUEST
	hva=$(json-field --live $c.log hva event=pin)
	set -- $(page_flags $vmm_pid "$hva")
	pfn=$1 flags=${2:-0}
	check $c-pinned-thp "GPA $gpa (hva $hva) is pinned and part of a THP: pfn $pfn, kpageflags $flags (KPF_THP, bit 22)" \
		test "$(kpf "$flags" 22)" = 1
	kmsg_mark $c
	out=$(hwpoison-guest $vmm_pid $gpa 2>&1)
	echo "  hwpoison-guest: $out"
	inj=$(injector_answer "$out")
	inj=${inj:-ok}
	mf=$(mf_result $c "$pfn")
	check $c-injector "corrupt-pfn answers $want_inj (got $inj)" test "$inj" = "$want_inj"
	check $c-mf "memory_failure(): $want_mf (got $mf)" test "$mf" = "$want_mf"
	if [ $mode = early ] && host_has thp-unsplittable-sigbus; then
		want_sig=1
		wait_for $c.log '"si_code":"BUS_MCEERR_AO"'
		wait_for $c.log '"event":"guest_retired"'
	else
		want_sig=0
	fi
	# two more passes: the guest rewrites and checks every page, the
	# poisoned one too unless it was told; the page is still mapped, so no
	# access faults (no AR)
	p=$(last_pass $c.log)
	wait_pass $c.log $((p + 2))
	set -- $(page_flags $vmm_pid "$hva")
	check $c-still-mapped "the poisoned page is still mapped, the same pfn (got '$1', want $pfn) with KPF_HWPOISON (bit 19) and in a THP (got ${2:-none})" \
		sh -c "[ '$1' = '$pfn' ] && [ $(kpf "${2:-0}" 19)$(kpf "${2:-0}" 22) = 11 ]"
	stop_vmm $c.log
	hc1=$(hardware_corrupted_kb)
	check $c-vmm-exit "VMM stopped cleanly by SIGTERM (got $vmm_rc)" test "$vmm_rc" -eq 0
	errors=$(json-field $c.log errors event=guest_pass | tail -n 1)
	check $c-guest-intact "the guest ran on, its checksums intact (last pass: ${errors:-no pass} errors)" \
		test "${errors:-1}" -eq 0
	expect_count $c-signals $want_sig $c.log '"event":"sigbus"'
	if [ $want_sig = 1 ]; then
		expect_count $c-ao-page 1 $c.log '"si_code":"BUS_MCEERR_AO"' "\"gpa\":\"$gpa\"" \
			'"lsb":21' '"unsplit_thp":true' '"lsb_used":12' '"pages":1' '"action":"inject"' \
			'"mci_misc":"0x8c"'
		expect_count $c-retired-page 1 $c.log '"event":"guest_retired"' "\"gpa\":\"$gpa\"" \
			'"pages":1' '"matches_injection":true'
	fi
	check $c-hardware-corrupted "HardwareCorrupted grew by 4 kB, one page ($hc0 -> $hc1)" \
		test $((hc1 - hc0)) -eq 4
	# the VMM's exit dropped the last reference: the folio with its poisoned
	# page went back to the allocator, which must not complain of it
	bad=$(kernel_since $c | grep -c 'Bad page' || true)
	check $c-freed-quietly "no 'Bad page' in the kernel log after the folio was freed (got $bad)" \
		test "$bad" -eq 0
	sig=$(json-field $c.log si_code event=sigbus 2>/dev/null | head -n 1)
	lsb=$(json-field $c.log lsb event=sigbus 2>/dev/null | head -n 1)
	told=$(json-field $c.log pages event=guest_retired 2>/dev/null | head -n 1)
	behaviour thp-pinned-$mode injector=$inj mf=$mf signal=${sig:-none} lsb=${lsb:--} \
		guest_told_pages=${told:-0} guest=$([ "$vmm_rc" -eq 0 ] && [ "${errors:-1}" -eq 0 ] &&
			echo runs_on || echo failed) hardware_corrupted_kb=$((hc1 - hc0))
done
finish
