# compare.sh's two cases beside late and early kill: guest RAM on 2 MiB
# hugetlb pages, and a poisoned page of the VMM's own heap (outside guest
# RAM). Sourced by compare.sh.

# --- 2 MiB hugetlb backing --------------------------------------------------
# Each VMM's guest RAM on the outer kernel's hugetlb pool: libvirt's
# memoryBacking/hugepages (a hugetlbfs file), hwlab-vmm's --backing hugetlb
# (MAP_HUGETLB). The target keeps its 512 pages in one guest THP, 2 MiB
# aligned in guest-physical memory and so in one host huge page: the 2 MiB
# lost is all its own (a guest-kernel page in there would be fatal at its
# first touch, in either VMM). The outer kernel names the whole 2 MiB in its
# SIGBUS (si_addr_lsb 21: kernel patch 0001 for the vCPU's AR; the head
# page for an AO). What each VMM tells its guest of it is the row.
huge_args="hwlab_inner.thp=1 hwlab_inner.pages=512 hwlab_inner.restart=0 hwlab_inner.on_sigbus=recover hwlab_inner.interval_ms=200"
# hugetlb_pool : free huge pages for one 128 MiB guest (64), one to spare;
# every event loses one to the poison for good
hugetlb_pool() {
	hp_free=$(awk '/^HugePages_Free:/ { print $2 }' /proc/meminfo)
	echo $(($(cat /proc/sys/vm/nr_hugepages) + 65 - hp_free)) >/proc/sys/vm/nr_hugepages
}
# one_thp CONSOLE BASE : the target's 512 pages are one 2 MiB-aligned guest
# THP at BASE (asked before the poison: a target that recovers replaces its
# lost pages with others)
one_thp() {
	[ -n "$2" ] && [ $(($2 & 0x1fffff)) -eq 0 ] &&
		[ "$(page_field "$1" 511 gpa)" = "$(printf '%#x' $(($2 + 0x1ff000)))" ]
}
# each_huge_event FUNCTION : FUNCTION 1, 2 ... $huge_events (a VMM's boot
# each) with the outer early kill off, until one fails (its guest did not boot)
each_huge_event() {
	echo 0 >/proc/sys/vm/memory_failure_early_kill
	ehe_n=1
	while [ $ehe_n -le "$huge_events" ]; do
		$1 $ehe_n || break
		ehe_n=$((ehe_n + 1))
	done
}
# qemu_huge_event N : one QEMU boot on hugetlb RAM, the target's page 2 poisoned
qemu_huge_event() {
	qh_con=q-$gtag-$uq_suite-hugetlb-$1.con
	hugetlb_pool
	if ! start_qemu $qh_con "$huge_args" hugetlb; then
		[ -n "$noboot" ] ||
			check $gtag-$vmm-hugetlb-$1-started "libvirt started $vmm on hugetlb RAM (see the watch's lines above)" false
		stop_qemu
		return 1
	fi
	qh_base=$(page_field $qh_con 0 gpa)
	qh_thp=no
	one_thp $qh_con "$qh_base" && qh_thp=yes
	gpa=$(page_field $qh_con 2 gpa)
	qemu_poison "$gpa"
	wait_lv "$lv" '"event":"memory_failure"' '"action":"inject"'
	# the page QEMU told its guest of, in its own stderr line
	told=$(sed -n 's/.*GUEST addr \(0x[0-9a-f]*\) of type .* injected.*/\1/p' $qemu_log | head -n 1)
	[ -n "$told" ] || told=$gpa
	wait_outcome $qh_con "$(printf '%#x' $((told >> 12)))"
	t_inj=$(qemu_inject_time "$t0")
	measure hugetlb $qh_con $(((told - qh_base) / 4096)) "$told" "$t0" "$t_inj" \
		"$(mf_words "$lv" '"event":"memory_failure"')" \
		"poisoned=$gpa huge_base=$qh_base lsb=- pages_recovered=$(recovered_in $qh_con $((qh_base >> 12)))"
	# libvirt writes QEMU's command line into its log, -object as JSON
	qh_backed=no
	grep -q '"qom-type":"memory-backend-file".*"mem-path":"/dev/hugepages/' $qemu_log && qh_backed=yes
	stop_qemu
	if [ "$1" = 1 ]; then
		echo "  $vmm hugetlb: $out"
		qemu_show $qh_con
		grep -o '"qom-type":"memory-backend-[a-z]*"[^}]*' $qemu_log | sed "s/^/  $vmm(ram): /"
		check $gtag-$vmm-hugetlb-backed "$guest: $vmm's libvirt gave its guest RAM a hugetlbfs file (mem-path=/dev/hugepages/...)" \
			test $qh_backed = yes
		check $gtag-$vmm-hugetlb-thp "$guest: the target's 512 pages are one 2 MiB-aligned guest THP ($qh_base)" \
			test $qh_thp = yes
	fi
}
# hwlab_huge_event N : one hwlab-vmm boot on hugetlb RAM, the target's page 2
# poisoned; it waits for the guest to have isolated the whole 2 MiB
hwlab_huge_event() {
	hh_con=h-$gtag-hugetlb-$1.con hh_log=h-$gtag-hugetlb-$1.log
	hugetlb_pool
	start_hwlab $hh_log $hh_con "$huge_args" --backing hugetlb || return 1
	hh_base=$(page_field $hh_con 0 gpa)
	hh_thp=no
	one_thp $hh_con "$hh_base" && hh_thp=yes
	gpa=$(page_field $hh_con 2 gpa)
	poison_guest "$vmm_pid" "$gpa"
	wait_for $hh_log '"event":"sigbus"' '"action":"inject"'
	# its first injection: the page it told the guest of, when, the lsb it
	# acted on, and its report (each later AR is an injection of its own)
	json_line $hh_log '"event":"sigbus"' '"action":"inject"' >$hh_log.first
	told=$(json-field $hh_log.first mci_addr)
	[ -n "$told" ] || told=$gpa
	t_inj=$(json-field $hh_log.first t_ns)
	hh_lsb=$(json-field $hh_log.first lsb)
	wait_recovered $hh_con $((hh_base >> 12))
	wait_for $hh_log '"event":"poison_spread"' '"status":"done"'
	measure hugetlb $hh_con $(((told - hh_base) / 4096)) "$told" "$t0" "$t_inj" \
		"$(mf_words $hh_log.first '"event":"sigbus"')" \
		"poisoned=$gpa huge_base=$hh_base lsb=${hh_lsb:--} pages_recovered=$(recovered_in $hh_con $((hh_base >> 12))) spread_ms=$(spread_ms $hh_log)"
	stop_vmm $hh_log >/dev/null
	if [ "$1" = 1 ]; then
		grep -E '"event":"(sigbus|poison_spread)"' $hh_log | head -n 4 | sed 's/^/  vmm: /'
		check $gtag-hwlab-vmm-hugetlb-thp "$guest: the target's 512 pages are one 2 MiB-aligned guest THP ($hh_base)" \
			test $hh_thp = yes
	fi
}

# heap_page PID : a present page (pagemap bit 63) of the process's [heap],
# as a hex address: the last present one of its first 256 pages, and never
# its first page: in a static binary (hwlab-vmm) that holds the main
# thread's TLS, errno included, which any signal handler touches; measured,
# the VMM then dies in its SIGBUS handler ("MCE: Killing"), before it can
# say anything. Nothing if there is none.
heap_page() {
	hp_range=$(awk '$6 == "[heap]" { print $1; exit }' /proc/$1/maps)
	[ -n "$hp_range" ] || return 1
	hp_va=$((0x${hp_range%-*} + 4096)) hp_end=$((0x${hp_range#*-}))
	[ $hp_end -gt $((hp_va + 256 * 4096)) ] && hp_end=$((hp_va + 256 * 4096))
	hp_found=
	while [ $hp_va -lt $hp_end ]; do
		# pagemap-pfn answers for a present page alone (as root, with its
		# PFN); its refusal of each page that is not is no news here
		pagemap-pfn "$1" $hp_va >/dev/null 2>&1 && hp_found=$hp_va
		hp_va=$((hp_va + 4096))
	done
	[ -n "$hp_found" ] && printf '%#x\n' $hp_found
}
# outside_event CONSOLE : poison a page of the VMM's own heap (not guest
# RAM) by pid and address (debugfs corrupt-va, kernel patch 0002), early
# kill; sets oe_va, and oe_alive: whether the VMM and its guest are still
# alive at the guest's next two INNER-ALIVE lines (every 5 s)
outside_event() {
	oe_va=$(heap_page "$vmm_pid")
	alive_then=$(grep -c "$REC"'INNER-ALIVE survivor=yes' "$1")
	echo "$vmm_pid $oe_va" >/sys/kernel/debug/hwpoison/corrupt-va
	echo "  $vmm outside RAM: poisoned its heap page $oe_va (corrupt-va exit $?)"
	wait_console "$1" 'INNER-ALIVE survivor=yes' $((alive_then + 2))
	oe_alive=no
	kill -0 "$vmm_pid" 2>/dev/null &&
		[ "$(grep -c "$REC"'INNER-ALIVE survivor=yes' "$1")" -ge $((alive_then + 2)) ] && oe_alive=yes
}
# outside_line REPORT : its compare line
outside_line() {
	echo "HWLAB-MEASURE compare guest=$guest vmm=$vmm case=outside gpa=- heap_va=$oe_va survived=$oe_alive" \
		"vmm_report=${1:--}" | tee -a compare.lines
}
