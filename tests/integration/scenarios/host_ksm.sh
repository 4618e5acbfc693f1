# KSM-merged guest RAM (docs/host-behaviour.md): two hwlab-vmm with --ksm
# (MADV_MERGEABLE, QEMU's mem-merge=on), ksmd running; the page of each
# guest image that KSM shares most (the zero-filled, untouched part of the
# bare-metal guest's .bss: one KSM page behind dozens of guest pages of each
# VMM) is poisoned with corrupt-pfn.
#  - 6.1 cannot handle KSM pages ("can't handle KSM pages.", "unmapping
#    failed page: Ignored", corrupt-pfn EBUSY): no signal, every mapping
#    stays, both guests run on;
#  - since v6.4 (ksm-hwpoison) every mapping of the page is unmapped, in
#    both VMMs, and each early-kill sharer gets one AO with si_addr_lsb 12, at
#    one of its addresses (collect_procs_ksm() adds a process once): the
#    guest is told of one page, and its other pages on the same KSM page are
#    unmapped untold (the guest would get an AR at its next touch of one).
# Each VMM tells its guest what it was told, and the guests run on. The
# guests have 8 MiB (a 4 MiB working set): two of them under TCG, and ksmd
# scanning both, are slow enough as it is.
# Guest RAM is on 4 KiB pages here (THP enabled=madvise, --backing anon):
# KSM splits a THP to merge its subpages, and since 6.12 a split maps the
# THP's zero-filled subpages to the shared zero page (TTU_USE_SHARED_ZEROPAGE),
# which KSM leaves alone, so on THP the zero-filled pages never become one
# KSM page (measured on sid: only the code pages the two guests share).
. /hwlab/scenarios/_lib.sh
. /hwlab/scenarios/_host.sh

# each VMM runs until the scenario stops it: ksmd takes its time (a bound)
VMM_TIMEOUT=600
ksm=/sys/kernel/mm/ksm
thp=/sys/kernel/mm/transparent_hugepage/enabled
thp_was=$(sed -n 's/.*\[\(.*\)\].*/\1/p' $thp 2>/dev/null)
[ -n "$thp_was" ] && echo madvise >$thp
if host_has ksm-hwpoison; then
	want_mf=dirty_LRU_page:Recovered want_inj=ok
else
	want_mf=unmapping_failed_page:Ignored want_inj=Device_or_resource_busy
fi
# the image area the guests do not write after boot: code and .bss
scan_from=$((0x100000)) scan_to=$((0x140000))

# ksm_pages PID HVA0 : "GPA PFN" of each KSM page in the image area of the
# VMM PID whose guest RAM starts at HVA0
ksm_pages() {
	kp_g=$scan_from
	while [ $kp_g -lt $scan_to ]; do
		kp_out=$(pagemap-pfn --flags "$1" "$(printf '%#x' $(($2 + kp_g)))" 2>/dev/null)
		[ -n "$kp_out" ] && [ "$(kpf "${kp_out#* }" 21)" = 1 ] &&
			printf '%#x %s\n' $kp_g "${kp_out% *}"
		kp_g=$((kp_g + 4096))
	done
}
# mapped_at PID HVA0 PFN GPA... : how many of the GPAs still map PFN
mapped_at() {
	ma_pid=$1 ma_hva=$2 ma_pfn=$3 ma_n=0
	shift 3
	for ma_g; do
		[ "$(pagemap-pfn "$ma_pid" "$(printf '%#x' $((ma_hva + ma_g)))" 2>/dev/null)" = "$ma_pfn" ] &&
			ma_n=$((ma_n + 1))
	done
	echo $ma_n
}

if [ ! -d $ksm ]; then
	fail ksm-sysfs "no $ksm: the host kernel lacks CONFIG_KSM"
	finish
fi
echo 1000 >$ksm/pages_to_scan
echo 10 >$ksm/sleep_millisecs
for mode in early late; do
	c=ksm-$mode
	if [ $mode = early ]; then ek=1 kill_opt="--mce-kill early"; else ek=0 kill_opt=; fi
	echo $ek >/proc/sys/vm/memory_failure_early_kill
	hc0=$(hardware_corrupted_kb)
	start_vmm $c-a.log --ksm --mem 8 --passes 0 $kill_opt $GUEST
	pid_a=$vmm_pid
	start_vmm $c-b.log --ksm --mem 8 --passes 0 $kill_opt $GUEST
	pid_b=$vmm_pid
	hva_a=$(json-field --live $c-a.log hva event=vmm_start)
	hva_b=$(json-field --live $c-b.log hva event=vmm_start)
	echo 1 >$ksm/run
	# until KSM shares a page of A at several GPAs and B maps it too (a
	# state, bounded by 300 s times the time factor)
	pfn= n=0
	while [ $n -lt $((300 * HWLAB_TIME_FACTOR)) ]; do
		if [ "$(cat $ksm/pages_sharing)" -ge 8 ]; then
			ksm_pages $pid_a $hva_a >$c-a.pages
			ksm_pages $pid_b $hva_b >$c-b.pages
			set -- $(awk '{ n[$2]++ } END { for (p in n) if (n[p] > best) { best = n[p]; pfn = p }
				print pfn, best + 0 }' $c-a.pages)
			[ "${2:-0}" -ge 4 ] && grep -q " $1\$" $c-b.pages && pfn=$1 && break
		fi
		sleep 1
		n=$((n + 1))
		[ $((n % 10)) = 0 ] && echo "  ksm: after ${n} s: pages_shared $(cat $ksm/pages_shared)" \
			"pages_sharing $(cat $ksm/pages_sharing) pages_unshared $(cat $ksm/pages_unshared)" \
			"full_scans $(cat $ksm/full_scans)"
	done
	echo 0 >$ksm/run	# the merged pages stay merged; no new ones from now on
	gpas_a=$(awk -v p="$pfn" '$2 == p { print $1 }' $c-a.pages)
	gpas_b=$(awk -v p="$pfn" '$2 == p { print $1 }' $c-b.pages)
	n_a=$(echo $gpas_a | wc -w) n_b=$(echo $gpas_b | wc -w)
	echo "  ksm: pages_shared $(cat $ksm/pages_shared) pages_sharing $(cat $ksm/pages_sharing);" \
		"pfn ${pfn:-none} behind $n_a GPAs of A ($(echo $gpas_a)) and $n_b of B"
	check $c-merged "one KSM page behind several guest pages of each VMM (pfn ${pfn:-none}: $n_a in A, $n_b in B)" \
		test -n "$pfn" -a "$n_a" -ge 4 -a "$n_b" -ge 1
	if [ -z "$pfn" ]; then
		stop_vmm $c-b.log
		vmm_pid=$pid_a
		stop_vmm $c-a.log
		continue
	fi
	# the tool refuses the merged page: other mappings share it (and where
	# KPF_KSM is believed, it is a KSM page)
	expect $c-tool-refuses 1 'refusing to poison it' hwpoison-guest $pid_a "$(echo $gpas_a | cut -d' ' -f1)"
	kmsg_mark $c
	inject_pfn "$pfn"
	mf=$(mf_result $c "$pfn")
	check $c-injector "corrupt-pfn answers $want_inj (got $inject_err)" test "$inject_err" = "$want_inj"
	check $c-mf "memory_failure(): $want_mf (got $mf)" test "$mf" = "$want_mf"
	if host_has ksm-hwpoison; then
		check $c-dmesg-sharers "the kernel signals or unmaps every sharer: no 'can't handle KSM'" \
			sh -c "! dmesg | grep -q \"$pfn: can't handle KSM pages\""
		want_mapped_a=0 want_mapped_b=0
	else
		check $c-dmesg-refused "'$pfn: can't handle KSM pages.' in the kernel log" \
			sh -c "dmesg | grep -q \"$pfn: can't handle KSM pages\""
		want_mapped_a=$n_a want_mapped_b=$n_b
	fi
	if [ $mode = early ] && host_has ksm-hwpoison; then
		want_sig=1
		wait_for $c-a.log '"si_code":"BUS_MCEERR_AO"'
		wait_for $c-b.log '"si_code":"BUS_MCEERR_AO"'
	else
		want_sig=0
	fi
	m_a=$(mapped_at $pid_a $hva_a $pfn $gpas_a)
	m_b=$(mapped_at $pid_b $hva_b $pfn $gpas_b)
	check $c-mappings "GPAs still mapping pfn $pfn: A $m_a of $n_a, B $m_b of $n_b (want $want_mapped_a, $want_mapped_b)" \
		test "$m_a" -eq $want_mapped_a -a "$m_b" -eq $want_mapped_b
	# two more passes of each guest: both run on
	vmm_pid=$pid_a
	wait_pass $c-a.log $(($(last_pass $c-a.log) + 2))
	vmm_pid=$pid_b
	wait_pass $c-b.log $(($(last_pass $c-b.log) + 2))
	stop_vmm $c-b.log
	rc_b=$vmm_rc
	vmm_pid=$pid_a
	stop_vmm $c-a.log
	rc_a=$vmm_rc
	hc1=$(hardware_corrupted_kb)
	guest=runs_on signalled=0
	for v in a b; do
		eval "rc=\$rc_$v gpas=\$gpas_$v"
		errors=$(json-field $c-$v.log errors event=guest_pass | tail -n 1)
		check $c-$v-runs-on "VMM $v stopped by SIGTERM (rc $rc), its guest's checksums intact (${errors:-no pass} errors)" \
			test "$rc" -eq 0 -a "${errors:-1}" -eq 0
		[ "$rc" -eq 0 ] && [ "${errors:-1}" -eq 0 ] || guest=failed
		expect_count $c-$v-signals $want_sig $c-$v.log '"event":"sigbus"'
		[ "$(count_lines $c-$v.log '"event":"sigbus"')" -gt 0 ] && signalled=$((signalled + 1))
		if [ $want_sig = 1 ]; then
			told=$(json-field $c-$v.log gpa si_code=BUS_MCEERR_AO)
			check $c-$v-ao-one-of-them "one AO, lsb 12, at one of the GPAs on the KSM page ($told)" \
				sh -c "echo ' $(echo $gpas) ' | grep -q ' $told '"
			expect_count $c-$v-ao 1 $c-$v.log '"si_code":"BUS_MCEERR_AO"' '"lsb":12' '"pages":1' \
				'"action":"inject"'
			expect_count $c-$v-retired 1 $c-$v.log '"event":"guest_retired"' "\"gpa\":\"$told\""
		fi
	done
	check $c-hardware-corrupted "HardwareCorrupted grew by 4 kB, one page ($hc0 -> $hc1)" \
		test $((hc1 - hc0)) -eq 4
	sig=$(json-field $c-a.log si_code event=sigbus 2>/dev/null | head -n 1)
	behaviour ksm-$mode injector=$inject_err mf=$mf signal=${sig:-none} \
		lsb=$(json-field $c-a.log lsb event=sigbus 2>/dev/null | head -n 1 | grep . || echo -) \
		sharers_signalled=$signalled/2 mapped_after=$m_a/$n_a,$m_b/$n_b \
		guest_told_pages=$(count_lines $c-a.log '"event":"guest_retired"'),$(count_lines $c-b.log '"event":"guest_retired"') \
		guest=$guest hardware_corrupted_kb=$((hc1 - hc0))
done
[ -n "$thp_was" ] && echo "$thp_was" >$thp
finish
