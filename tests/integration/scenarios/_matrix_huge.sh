# guest_matrix.sh's hugetlb cells: a lost 2 MiB of private hugetlb RAM
# (huge_cell) and of shared hugetlb RAM the VMM salvages (salvage_cell).
# Sourced by guest_matrix.sh.

# the target of the hugetlb cells: its 512 pages in one guest THP, and it
# handles its SIGBUS and goes on
THP_TARGET_ARGS="hwlab_inner.thp=1 hwlab_inner.pages=512 hwlab_inner.restart=0 \
hwlab_inner.on_sigbus=recover hwlab_inner.interval_ms=200"
# thp_target K CELL BACKING : boot that target on guest RAM of BACKING (log
# and console K-CELL.*); sets gpa, its page 0, and base, the 2 MiB page gpa
# should start; false when the target did not start
thp_target() {
	start_linux "$1-$2.log" "$1-$2.con" "$MATRIX_APPEND $THP_TARGET_ARGS" --backing "$3"
	started "$1" "$2" "$1-$2.con" || return 1
	gpa=$(page_field "$1-$2.con" 0 gpa)
	base=$(printf '%#x' $((gpa & ~0x1fffff)))
}
# thp_outcome K CELL WANT SKIP_ERE EVENT : stop that target's VMM; sets n,
# the pages of its 2 MiB the guest isolated; when n is not WANT or the
# guest panicked, its last words (without SKIP_ERE's lines) and the VMM's
# EVENT line; and the check K-CELL-thp, that its 512 pages were one THP
thp_outcome() {
	stop_vmm "$1-$2.log" >/dev/null
	n=$(recovered_in "$1-$2.con" $((base >> 12)))
	if [ "$n" -ne "$3" ] || grep -qE 'Kernel panic|Oops|BUG:' "$1-$2.con"; then
		last_words "$1-$2.con" "$4"
		json_line "$1-$2.log" "\"event\":\"$5\"" | sed 's/^/  vmm: /'
	fi
	check "$1-$2-thp" "$kver: the target's 512 pages are one 2 MiB-aligned THP ($gpa)" test "$gpa" = "$base"
}

# last_words CONSOLE SKIP_ERE : what a guest said around its panic, oops or
# machine check, without the per-page lines SKIP_ERE names
last_words() {
	grep -vE "$2" "$1" |
		grep -E -B2 -A12 'Kernel panic|Oops|BUG:|Machine check|Hardware Error\]: CPU' |
		head -n 60 | sed 's/^/  con: /'
}

# splits_by_reading : whether this row's kernel (kver "SUITE X.Y.Z-N") is
# 6.12 or later, whose THP split reads every subpage
# (try_to_map_unused_to_zeropage())
splits_by_reading() {
	sbr_v=$(echo "$kver" | sed -n 's/^[a-z]* \([0-9]*\)\.\([0-9]*\)\..*/\1 \2/p')
	[ -n "$sbr_v" ] && set -- $sbr_v && { [ "$1" -gt 6 ] || { [ "$1" -eq 6 ] && [ "$2" -ge 12 ]; }; }
}

# huge_cell K : guest RAM on the outer kernel's 2 MiB pages, private
# (--backing hugetlb): the whole 2 MiB is lost and the guest is told of
# every page (the spread). The target keeps its 512 pages in one guest THP
# and handles its SIGBUS, so the guest must isolate all 512 (linux_guest_edges
# 5b) and live. A kernel whose THP split reads every subpage (6.12 and later)
# cannot: the split reads a lost page it was not told of yet, in kernel
# context, and the guest dies. That is checked as the documented limit of
# private hugetlb RAM (salvage_cell is the way such a guest lives), so that
# a change either way shows.
huge_cell() {
	k=$1
	thp_target "$k" huge hugetlb || return 1
	hwpoison-guest $vmm_pid "$(printf '%#x' $((gpa + 300 * 4096)))" >/dev/null
	wait_recovered "$k-huge.con" $((base >> 12))
	alive_then=$(grep -c 'INNER-ALIVE survivor=yes' "$k-huge.con")
	# a guest that panicked says nothing more: no waiting for it
	if ! grep -q 'Kernel panic' "$k-huge.con"; then
		wait_for "$k-huge.log" '"event":"poison_spread"' '"status":"done"'
		wait_console "$k-huge.con" 'INNER-ALIVE survivor=yes' $((alive_then + 1))
	fi
	thp_outcome "$k" huge 512 'INNER-PAGE|INNER-SIGBUS|INNER-ROUND|recovery action for' vmm_exit
	if splits_by_reading; then
		check "$k-huge-private-limit" "$kver, private hugetlb: the guest dies in its THP split, reading a lost page it was not told of (the documented limit; got $n of 512 isolated)" \
			sh -c "grep -qE 'unrecoverable error in kernel context|Fatal local machine check' $k-huge.con && grep -q 'Kernel panic' $k-huge.con"
		measure "$k" hugetlb vmm=hwlab recovered="$n" outcome=died
		return 0
	fi
	check "$k-huge-all-isolated" "$kver isolated all 512 pages of the lost 2 MiB (got $n)" test "$n" -eq 512
	check "$k-huge-survivor" "$kver: the other inner process lives on" \
		test "$(grep -c 'INNER-ALIVE survivor=yes' "$k-huge.con")" -gt "$alive_then"
	check "$k-huge-no-panic" "$kver: no oops or panic" sh -c "! grep -qE 'Kernel panic|Oops|BUG:' $k-huge.con"
	measure "$k" hugetlb vmm=hwlab recovered="$n" spread_ms="$(spread_ms "$k-huge.log")"
}

# reserve_hugepages N : N free 2 MiB pages for one cell. A hugetlb page a
# cell poisoned stays in use for good (memory_failure() keeps its reference):
# emptying the pool turns it into a surplus page, and the next write of
# nr_hugepages takes it back as one of the count, so a fixed count of 65 gave
# 63 free after two poisoned cells and the next 128 MiB guest could not map
# its RAM. The pool is emptied, then grown to what stays in it plus N.
# Compaction when the kernel found too few.
reserve_hugepages() {
	echo 0 >/proc/sys/vm/nr_hugepages
	rh_kept=$(awk '/^HugePages_Total:/ { print $2 }' /proc/meminfo)
	echo $((rh_kept + $1)) >/proc/sys/vm/nr_hugepages
	if [ "$(cat /proc/sys/vm/nr_hugepages)" -lt $((rh_kept + $1)) ]; then
		echo 1 >/proc/sys/vm/compact_memory 2>/dev/null
		echo $((rh_kept + $1)) >/proc/sys/vm/nr_hugepages
	fi
	echo "  hugetlb pool: $(cat /proc/sys/vm/nr_hugepages) pages, $rh_kept kept by earlier poison," \
		"$(awk '/^HugePages_Free:/ { print $2 }' /proc/meminfo) free"
}

# salvage_cell K : as huge_cell, on --backing hugetlb-shared: guest RAM is a
# shared hugetlbfs memfd, and when the outer kernel loses the 2 MiB page the
# VMM reads the 511 healthy subpages back (outer kernel 10/10: read() of a
# poisoned huge page) and moves them in with the bad one poisoned again
# (hugetlb_salvage.h). The guest is told of one page, isolates it, and its
# THP split (6.12 and later read every subpage) finds the rest readable.
salvage_cell() {
	k=$1
	thp_target "$k" salvage hugetlb-shared || return 1
	bad=$(printf '%#x' $((gpa + 300 * 4096)))
	hwpoison-guest $vmm_pid "$bad" >/dev/null
	wait_console "$k-salvage.con" "recovery action for .*: Recovered"
	alive_then=$(grep -c 'INNER-ALIVE survivor=yes' "$k-salvage.con")
	wait_console "$k-salvage.con" 'INNER-ALIVE survivor=yes' $((alive_then + 1))
	# the target's next round touches all 512 pages again: the salvaged ones read back
	rounds_then=$(grep -c 'INNER-ROUND' "$k-salvage.con")
	wait_console "$k-salvage.con" 'INNER-ROUND' $((rounds_then + 1))
	thp_outcome "$k" salvage 1 'INNER-PAGE|INNER-ROUND' hugetlb_salvage
	expect_count "$k-salvage-kept-511" 1 "$k-salvage.log" '"event":"hugetlb_salvage"' \
		"\"gpa\":\"$base\"" '"status":"done"' '"pages_kept":511' '"pages_poisoned":1' \
		"\"poisoned\":[\"$bad\"]"
	expect_count "$k-salvage-ar-one-page" 1 "$k-salvage.log" '"si_code":"BUS_MCEERR_AR"' \
		"\"gpa\":\"$bad\"" '"action":"inject"'
	check "$k-salvage-one-isolated" "$kver isolated the one bad page of the lost 2 MiB, not 512 (got $n)" \
		test "$n" -eq 1
	check "$k-salvage-target-goes-on" "$kver: the target ran another round over its 512 pages" \
		test "$(grep -c 'INNER-ROUND' "$k-salvage.con")" -gt "$rounds_then"
	check "$k-salvage-survivor" "$kver: the other inner process lives on" \
		test "$(grep -c 'INNER-ALIVE survivor=yes' "$k-salvage.con")" -gt "$alive_then"
	check "$k-salvage-data-intact" "$kver: the target found every salvaged page as it wrote it (no INNER-CORRUPT)" \
		sh -c "! grep -q 'INNER-CORRUPT' $k-salvage.con"
	check "$k-salvage-no-panic" "$kver: no oops or panic" sh -c "! grep -qE 'Kernel panic|Oops|BUG:' $k-salvage.con"
	measure "$k" salvage vmm=hwlab recovered="$n" \
		salvage_ms="$(json_line "$k-salvage.log" '"event":"hugetlb_salvage"' | json-field - ms)"
}
