# hugetlb guest RAM with and without HugeTLB Vmemmap Optimization
# (docs/host-behaviour.md): with HVO (vm.hugetlb_optimize_vmemmap=1, or
# hugetlb_free_vmemmap=on at boot) a 2 MiB page's tail struct pages share
# one vmemmap page, and memory_failure() must still find, unmap and report
# the huge page, then dissolve it (which needs its vmemmap back). Where the
# host kernel lacks it (CONFIG_HUGETLB_PAGE_OPTIMIZE_VMEMMAP: no sysctl),
# the HVO half is skipped and says so. Either way: an AO with si_addr_lsb
# 21 to an early-kill VMM, which tells its guest the whole 2 MiB (512
# pages); the guest runs on; the poisoned huge page leaves the pool.
. /hwlab/scenarios/_lib.sh
. /hwlab/scenarios/_host.sh

hvo=/proc/sys/vm/hugetlb_optimize_vmemmap
gpa=0x523000
hugepages() { sed -n "s/^HugePages_$1: *//p" /proc/meminfo; }

echo 1 >/proc/sys/vm/memory_failure_early_kill
for on in 0 1; do
	c=hvo-$on
	if [ ! -e $hvo ]; then
		if [ $on = 1 ]; then
			skip $c "hugetlb with HVO: host ${HWLAB_HOST:-?} ($(uname -r)) has no $hvo (CONFIG_HUGETLB_PAGE_OPTIMIZE_VMEMMAP not set)"
			behaviour hvo-on hvo=not_compiled
			continue
		fi
	else
		echo 0 >/proc/sys/vm/nr_hugepages
		echo $on >$hvo
		check $c-sysctl "vm.hugetlb_optimize_vmemmap reads $on (got $(cat $hvo))" \
			test "$(cat $hvo)" = $on
	fi
	# the pool made after the setting: its pages are optimized (or not)
	echo 0 >/proc/sys/vm/nr_hugepages
	echo 16 >/proc/sys/vm/nr_hugepages
	# Before any poison: give one huge page back (its vmemmap restored,
	# then freed to the buddy allocator), as memory_failure() will
	# dissolve the poisoned one. A host whose HVO restore is broken shows
	# it here, with no memory failure involved: Debian's 6.12.118 carries
	# c7bde43f6daf ("mm/hugetlb_vmemmap: fix incorrect vmemmap restore in
	# rollback", which copies what each tail PTE maps) without the later
	# vmemmap_get_tail() it relies on, so every restored vmemmap page is a
	# copy of the head's struct pages, and freeing the page reports "Bad
	# page state" (6 per copy, 7 copies: 42). Such a host's poison case
	# below is then held to what it does (Failed, those reports), named.
	restore_bad=0
	if [ $on = 1 ]; then
		kmsg_mark $c-restore
		echo 15 >/proc/sys/vm/nr_hugepages
		restore_log=$(kernel_since $c-restore)
		restore_bad=$(printf '%s\n' "$restore_log" | grep -c 'BUG: Bad page state' || true)
		echo 16 >/proc/sys/vm/nr_hugepages
		behaviour hvo-restore bad_page_reports=$restore_bad
		if [ "$restore_bad" -gt 0 ]; then
			echo "  $c: giving one HVO page back: $restore_bad 'Bad page state' reports, no poison involved:"
			printf '%s\n' "$restore_log" | grep -A3 'BUG: Bad page state' | grep 'page dumped because\|BUG:' |
				sort | uniq -c | sed 's/^/  | /' | head -n 8
		fi
	fi
	total0=$(hugepages Total)
	hc0=$(hardware_corrupted_kb)
	taint0=$(cat /proc/sys/kernel/tainted)
	kmsg_mark $c
	# the VMM's own hook (corrupt-pfn of its page at the end of pass 1)
	# holds the guest until the AO is handled: the guest cannot touch the
	# page first (an AR, lsb 12 on a stock host) as it can while
	# hwpoison-guest writes from outside
	start_vmm $c.log --backing hugetlb --mce-kill early --passes 0 --poison-gpa $gpa \
		--poison-method corrupt-pfn $GUEST
	wait_for $c.log '"event":"poison_hook"'
	pfn=$(json-field --live $c.log pfn event=poison_hook 2>/dev/null)
	wait_for $c.log '"si_code":"BUS_MCEERR_AO"'
	wait_for $c.log '"event":"guest_retired"'
	mf=$(mf_result $c "${pfn:-none}")
	total1=$(hugepages Total)
	if [ "$restore_bad" -gt 0 ]; then
		# memory_failure()'s MF_FAILED is -EBUSY, the write's error
		expect_count $c-injector 1 $c.log '"event":"poison_hook"' "\"gpa\":\"$gpa\"" '"ok":false' \
			'Device or resource busy'
	else
		expect_count $c-injector 1 $c.log '"event":"poison_hook"' "\"gpa\":\"$gpa\"" '"ok":true'
	fi
	inj=$([ "$(count_lines $c.log '"event":"poison_hook"' '"ok":true')" = 1 ] && echo ok || echo failed)
	if [ "$restore_bad" -gt 0 ]; then
		# the dissolve's free finds the same corrupted struct pages
		check $c-mf "memory_failure(): huge page Failed, as this host's broken HVO restore makes it (got $mf)" \
			test "$mf" = huge_page:Failed
	else
		check $c-mf "memory_failure(): huge page recovered (got $mf)" test "$mf" = huge_page:Recovered
	fi
	check $c-dissolved "the poisoned huge page left the pool: HugePages_Total $total0 -> $total1" \
		test "$total1" -eq $((total0 - 1))
	guest_runs_on $c
	expect_count $c-ao 1 $c.log '"si_code":"BUS_MCEERR_AO"' '"gpa":"0x400000"' '"lsb":21' \
		'"pages":512' '"action":"inject"' '"mci_misc":"0x95"'
	expect_count $c-retired 1 $c.log '"event":"guest_retired"' '"gpa":"0x400000"' '"pages":512'
	expect_count $c-signals 1 $c.log '"event":"sigbus"'
	# counted in the kernel log since the mark (the ring buffer is 4 MiB:
	# scenarios.table's log_buf_len) and by the taint flags a bad page
	# (B, bit 5) or a warning (W, bit 9) set
	since=$(kernel_since $c)
	bad=$(printf '%s\n' "$since" | grep -c 'Bad page\|BUG\|WARNING' || true)
	taint1=$(cat /proc/sys/kernel/tainted)
	new_taint=$(((taint1 & ~taint0) & (1 << 5 | 1 << 9)))
	if [ "$restore_bad" -gt 0 ]; then
		dissolve_bad=$(printf '%s\n' "$since" | grep -c 'BUG: Bad page state' || true)
		check $c-restore-bug "the host's HVO restore bug, not memory_failure()'s: $restore_bad 'Bad page state' reports from giving a clean page back, $dissolve_bad from the poisoned one's dissolve" \
			test "$dissolve_bad" -gt 0
		# and nothing else: no other BUG or WARNING, no new W taint
		other=$(printf '%s\n' "$since" | grep 'BUG\|WARNING' | grep -vc 'BUG: Bad page state' || true)
		check $c-quiet-otherwise "no BUG or WARNING but the bad-page reports (got $other; taint $taint0 -> $taint1)" \
			test "$other" -eq 0 -a $(((taint1 & ~taint0) & (1 << 9))) -eq 0
	else
		check $c-quiet "no 'Bad page', BUG or WARNING since the poison (got $bad lines; taint $taint0 -> $taint1)" \
			test "$bad" -eq 0 -a "$new_taint" -eq 0
	fi
	behaviour hvo-$([ $on = 1 ] && echo on || echo off) injector=$inj mf=$mf \
		signal=$(json-field $c.log si_code event=sigbus 2>/dev/null | head -n 1 | grep . || echo none) \
		lsb=$(json-field $c.log lsb event=sigbus 2>/dev/null | head -n 1 | grep . || echo -) \
		guest_told_pages=$(json-field $c.log pages event=guest_retired 2>/dev/null | head -n 1 | grep . || echo 0) \
		pool=$total0-\>$total1 kernel_bugs=$bad guest=$([ "$vmm_rc" -eq 0 ] && [ "${errors:-1}" -eq 0 ] && echo runs_on || echo failed) \
		hardware_corrupted_kb=$((hc1 - hc0))
done
[ -e $hvo ] && echo 0 >$hvo
finish
