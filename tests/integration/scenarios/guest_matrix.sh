# The guests users run, in hwlab-vmm: our tinyconfig bzImage and the newest
# stock kernel of Debian bookworm, trixie and sid (scripts/stock-kernels.sh,
# /hwlab/data/stock/SUITE/), each booted to the inner /init and poisoned:
# late kill (AR), early kill (AO: an AMD deferred error the guest's poll
# finds, check_interval tuned to 1 s), two vCPUs, and hugetlb-backed RAM,
# every outcome read from the guest's own log lines as linux_guest does. Per
# kernel, its boot time in hwlab-vmm and in sid's QEMU (11.1, its own
# sysroot under chroot: peer_qemu) in this same outer-VM boot, the median
# of samples taken in turn (boot_parity: K-boot-parity), and the time
# from the corrupt-pfn write to the guest's isolation of the page, from the
# guest's own printk clock mapped onto the outer one (guest_ms), with
# the tuned poll and, once per kernel, the kernel's default (300 s).
#
# hwlab.matrix=quick (make test): sid's stock kernel alone, late and early
# kill, a lost 2 MiB salvaged (hugetlb-shared), and both boot times. hwlab.matrix=full (make guest-matrix): every
# kernel, every case, the default poll. One "HWLAB-MEASURE guest-matrix"
# line per kernel and cell; tests/guest_matrix.py prints the table.
. /hwlab/scenarios/_lib.sh
# hwlab.matrix_kernels=a,b: only those rows (ours, bookworm, trixie, sid);
# hwlab.matrix_cases=a,b: only those of full's cases (smp, huge, salvage, default)
# hwlab.matrix_backing=KIND: the late, early and smp guests' RAM, thp
# unless told: QEMU maps guest RAM with MADV_HUGEPAGE, and so the boot times
# compare like with like (trixie's 6.12 in one outer boot: 17.2 s on anon
# 4 KiB pages against QEMU 11.1's 11.1 s; 10.4 s on thp against its 10.1 s:
# each first touch of guest RAM is a nested page fault under TCG)
# hwlab.matrix_samples=N: boot samples per VMM and kernel (quick 2, full 3)
# hwlab.matrix_boot_only=1: only the boot samples and K-boot-parity
matrix=quick only= cases="smp huge salvage default" backing="--backing thp" samples_opt= boot_only=
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	hwlab.matrix=*) matrix=${arg#*=} ;;
	hwlab.matrix_kernels=*) only=$(echo "${arg#*=}" | tr , ' ') ;;
	hwlab.matrix_cases=*) cases=$(echo "${arg#*=}" | tr , ' ') ;;
	hwlab.matrix_backing=*) backing="--backing ${arg#*=}" ;;
	hwlab.matrix_samples=*) samples_opt=${arg#*=} ;;
	hwlab.matrix_boot_only=*) boot_only=${arg#*=} ;;
	esac
done
case $matrix in
quick) kernels="sid" ;;
full) kernels="ours bookworm trixie sid" ;;
*) echo "HWLAB-ERROR hwlab.matrix must be quick or full, not '$matrix'"; exit 2 ;;
esac
case $samples_opt in
'' | [1-9] | [1-9][0-9]) ;;
*) echo "HWLAB-ERROR hwlab.matrix_samples must be a whole number 1..99, not '$samples_opt'"; exit 2 ;;
esac
[ -n "$only" ] && kernels=$only
VMM_TIMEOUT=600
# the guest's own clock on its lines: isolation is timed from its record
MATRIX_APPEND=printk.time=1
stock=/hwlab/data/stock
# the stock guests' initramfs: with rasdaemon when the image has it
stock_initrd=/hwlab/data/inner-initramfs-stock.cpio.gz
[ -f "$stock_initrd" ] || stock_initrd=$LINUX_INITRD

gpa_pfn() { printf '%#x' $(($1 >> 12)); }
# measure KERNEL CELL KEY=VALUE... : one line of the table
measure() {
	m_k=$1 m_c=$2
	shift 2
	echo "HWLAB-MEASURE guest-matrix kernel=$m_k cell=$m_c $*"
}
# t_ns_of OUTPUT : the t_ns hwpoison-guest's line ends with
t_ns_of() { sed -n 's/.*"t_ns":\([0-9]*\)}.*/\1/p'; }
# ms A B : (B - A) in ms, or "none" when either is missing
ms() { if [ -n "$1" ] && [ -n "$2" ]; then echo $((($2 - $1) / 1000000)); else echo none; fi; }

# use_kernel NAME : sets LINUX_KERNEL, LINUX_INITRD and kver for a row, or
# returns 1 with skip_reason set
use_kernel() {
	skip_reason=
	if [ "$1" = ours ]; then
		LINUX_KERNEL=/hwlab/data/bzImage
		LINUX_INITRD=/hwlab/data/inner-initramfs.cpio.gz
		kver="ours (tinyconfig 6.1)" kpkg=bzImage ras=
		return 0
	fi
	if [ -f "$stock/$1/unavailable" ]; then
		skip_reason=$(cat "$stock/$1/unavailable")
		return 1
	fi
	if [ ! -f "$stock/$1/vmlinuz" ]; then
		skip_reason="no Debian $1 kernel in this image (make initramfs: scripts/stock-kernels.sh)"
		return 1
	fi
	LINUX_KERNEL=$stock/$1/vmlinuz
	LINUX_INITRD=$stock_initrd
	# the distro's own RAS tooling, as a user runs it (our bzImage has no
	# tracing, so no rasdaemon)
	ras=hwlab_inner.ras=1
	# "PACKAGE VERSION SUITE": the checks name "SUITE VERSION"
	read -r kpkg kv _ <"$stock/$1/version"
	kver="$1 $kv"
}

# boot_in_hwlab K : boot, late kill, and the boot time (a guest that does not
# reach its target fails here, and the rest of its row is skipped)
late_cell() {
	k=$1
	echo 0 >/proc/sys/vm/memory_failure_early_kill
	# shellcheck disable=SC2086
	start_linux "$k-late.log" "$k-late.con" "$MATRIX_APPEND $ras hwlab_inner.pages=8" $backing
	t_start=$(sed -n 's/.*"event":"vmm_start".*"t_ns":\([0-9]*\)}/\1/p' "$k-late.log")
	t_boot=$(grep -m1 'INNER-BOOT' "$k-late.con" | stamp_of)
	uptime=$(sed -n 's/.*INNER-BOOT .*uptime=\([0-9.]*\).*/\1/p' "$k-late.con" | head -n 1)
	if ! grep -q 'INNER-READY tag=target' "$k-late.con"; then
		stop_vmm "$k-late.log" >/dev/null
		show_console "$k-late.con" | tail -n 20
		grep -E 'Kernel panic|WARNING|BUG|Oops|XSAVE' "$k-late.con" | head -n 5 | sed 's/^/  con: /'
		fail "$k-boot" "$kver reaches the inner /init in hwlab-vmm"
		measure "$k" boot vmm=hwlab to_init_ms=none "reason=\"$(grep -m1 -E 'Kernel panic|Attempted|BUG' "$k-late.con" |
			sed 's/^\[t_ns=[0-9]*\] //; s/^\[ *[0-9.]*\] //; s/^Kernel panic - not syncing: /panic: /' |
			tr -d '"' | cut -c1-100)\""
		return 1
	fi
	pass "$k-boot" "$kver reaches the inner /init in hwlab-vmm ($(ms "$t_start" "$t_boot") ms; guest uptime $uptime s)"
	# (this boot carries rasdaemon's append; the boot-time cell is
	# boot_parity's, this one is the late kill's own)
	measure "$k" late-boot vmm=hwlab to_init_ms="$(ms "$t_start" "$t_boot")" guest_uptime_s="$uptime" \
		"version=\"$kver $kpkg\""
	gpa=$(page_field "$k-late.con" 2 gpa)
	pfn=$(gpa_pfn "$gpa")
	t0=$(hwpoison-guest $vmm_pid "$gpa" | t_ns_of)
	wait_console "$k-late.con" 'INNER-RESTART n=1'
	wait_console "$k-late.con" 'INNER-ALIVE survivor=yes hardware_corrupted_kb=4'
	ras_wait "$k-late.con"
	stop_vmm "$k-late.log" >/dev/null
	show_console "$k-late.con" | grep -v INNER-PAGE | tail -n 12
	# every port or MMIO access no device answered (each one a KVM exit)
	measure "$k" io vmm=hwlab ignored="$(json_line "$k-late.log" '"event":"vmm_exit"' |
		sed -n 's/.*"io_ignored":\([0-9]*\).*/\1/p')"
	expect_count "$k-late-ar" 1 "$k-late.log" '"si_code":"BUS_MCEERR_AR"' "\"gpa\":\"$gpa\"" \
		'"action":"inject"' '"mci_status":"0xbc00080000000000"' '"bank":9'
	check "$k-late-recovered" "$kver: $pfn recovery action for dirty LRU page: Recovered" \
		grep -q "Memory failure: $pfn: recovery action for dirty LRU page: Recovered" "$k-late.con"
	check "$k-late-sigbus" "$kver: the inner target got BUS_MCEERR_AR and died of it" \
		grep -q "INNER-SIGBUS tag=target .* code=BUS_MCEERR_AR .* idx=2" "$k-late.con"
	check "$k-late-survivor" "$kver: the other inner process lives" \
		grep -q 'INNER-ALIVE survivor=yes hardware_corrupted_kb=4' "$k-late.con"
	check "$k-late-no-panic" "$kver: no oops or panic" \
		sh -c "! grep -qE 'Kernel panic|Oops|BUG:' $k-late.con"
	measure "$k" late vmm=hwlab recovered=$(grep -c "Memory failure: $pfn: recovery action .*: Recovered" "$k-late.con") \
		isolated_ms="$(guest_ms "$k-late.con" "$t0" "Memory failure: $pfn: recovery action" 0)"
	ras_cells "$k" late "$k-late.con" "$gpa" "$k-late.log"
}

# started K CELL CONSOLE : did start_linux's guest reach its target? If not,
# the cell fails with the guest's last words and the VMM's, and the VMM is
# stopped
started() {
	grep -q 'INNER-READY tag=target' "$3" && return 0
	stop_vmm "${3%.con}.log" >/dev/null
	grep -E 'INNER-|Kernel panic|WARNING|BUG|Oops|usage' "$3" | tail -n 8 | sed 's/^/  con: /'
	tail -n 4 "${3%.con}.log.err" 2>/dev/null | sed 's/^/  vmm: /'
	fail "$1-$2-started" "$kver: the guest's target is up (INNER-READY) in hwlab-vmm"
	return 1
}

# early_cell K INTERVAL : an AO; INTERVAL 1 (tuned) or default (the
# kernel's 300 s). The caller turns the outer early kill on.
early_cell() {
	k=$1 iv=$2 tag=early-tuned-1s
	[ "$iv" = default ] && tag=early-default-poll
	iv_ras=
	[ "$iv" = 1 ] && iv_ras=$ras
	start_linux "$k-$tag.log" "$k-$tag.con" "$MATRIX_APPEND $iv_ras hwlab_inner.mode=early \
hwlab_inner.interval_ms=3600000 hwlab_inner.check_interval=$iv" --mce-kill early $backing
	started "$k" "$tag" "$k-$tag.con" || return 1
	gpa=$(page_field "$k-$tag.con" 3 gpa)
	pfn=$(gpa_pfn "$gpa")
	t0=$(hwpoison-guest $vmm_pid "$gpa" | t_ns_of)
	# the default poll may take its whole 300 s (and more on a busy machine)
	wait_console "$k-$tag.con" "Memory failure: $pfn: recovery action"
	wait_console "$k-$tag.con" 'INNER-EXIT tag=target'
	ras_wait "$k-$tag.con"
	stop_vmm "$k-$tag.log" >/dev/null
	show_console "$k-$tag.con" | grep -v INNER-PAGE | tail -n 8
	poll=$(sed -n 's/.*INNER-MCE check_interval=\([0-9a-z]*\) .*/\1/p' "$k-$tag.con" | head -n 1)
	expect_count "$k-$tag-ao" 1 "$k-$tag.log" '"si_code":"BUS_MCEERR_AO"' "\"gpa\":\"$gpa\"" \
		'"action":"inject"' '"mci_status":"0x9c00180000000000"'
	check "$k-$tag-recovered" "$kver (check_interval $poll s): $pfn isolated from the deferred error: Recovered" \
		grep -q "Memory failure: $pfn: recovery action for dirty LRU page: Recovered" "$k-$tag.con"
	check "$k-$tag-sigbus" "$kver: the target got BUS_MCEERR_AO before it read the page" \
		grep -q "INNER-SIGBUS tag=target .* code=BUS_MCEERR_AO .* idx=3" "$k-$tag.con"
	# what matched, if anything: the console is not kept after the run
	grep -E 'Kernel panic|Oops|BUG:' "$k-$tag.con" | head -n 5 | sed 's/^/  con: /'
	check "$k-$tag-no-panic" "$kver: no oops or panic" sh -c "! grep -qE 'Kernel panic|Oops|BUG:' $k-$tag.con"
	measure "$k" "$tag" vmm=hwlab check_interval_s="$poll" \
		recovered=$(grep -c "Memory failure: $pfn: recovery action .*: Recovered" "$k-$tag.con") \
		isolated_ms="$(guest_ms "$k-$tag.con" "$t0" "Memory failure: $pfn: recovery action" 0)"
	[ "$iv" = 1 ] && ras_cells "$k" early "$k-$tag.con" "$gpa" "$k-$tag.log"
}

# smp_cell K : two vCPUs, a page consumed on each
smp_cell() {
	k=$1
	start_linux "$k-smp.log" "$k-smp.con" "$MATRIX_APPEND hwlab_inner.cpu=alternate" --vcpus 2 $backing
	started "$k" smp "$k-smp.con" || return 1
	gpa0=$(page_field "$k-smp.con" 1 gpa)
	hwpoison-guest $vmm_pid "$gpa0" >/dev/null
	wait_console "$k-smp.con" 'INNER-READY tag=target' 2
	gpa1=$(page_field "$k-smp.con" 4 gpa)
	hwpoison-guest $vmm_pid "$gpa1" >/dev/null
	wait_console "$k-smp.con" 'INNER-READY tag=target' 3
	wait_console "$k-smp.con" 'INNER-ALIVE survivor=yes hardware_corrupted_kb=8'
	stop_vmm "$k-smp.log" >/dev/null
	check "$k-smp-cpus" "$kver brought up both vCPUs" grep -q 'INNER-BOOT .* cpus=2' "$k-smp.con"
	expect_count "$k-smp-ar-vcpu0" 1 "$k-smp.log" '"si_code":"BUS_MCEERR_AR"' "\"gpa\":\"$gpa0\"" \
		'"action":"inject"' '"vcpu":0'
	expect_count "$k-smp-ar-vcpu1" 1 "$k-smp.log" '"si_code":"BUS_MCEERR_AR"' "\"gpa\":\"$gpa1\"" \
		'"action":"inject"' '"vcpu":1'
	n=$(grep -c 'recovery action for dirty LRU page: Recovered' "$k-smp.con")
	check "$k-smp-recovered" "$kver recovered both pages (got $n)" test "$n" -eq 2
	check "$k-smp-survivor" "$kver: the other inner process lives through both" \
		grep -q 'INNER-ALIVE survivor=yes hardware_corrupted_kb=8' "$k-smp.con"
	measure "$k" smp vmm=hwlab recovered="$n"
}

# the target of the hugetlb cells: its 512 pages in one guest THP, and it
# handles its SIGBUS and goes on
THP_TARGET_ARGS="hwlab_inner.thp=1 hwlab_inner.pages=512 hwlab_inner.restart=0 \
hwlab_inner.on_sigbus=recover hwlab_inner.interval_ms=200"

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
	start_linux "$k-huge.log" "$k-huge.con" "$MATRIX_APPEND $THP_TARGET_ARGS" --backing hugetlb
	started "$k" huge "$k-huge.con" || return 1
	gpa=$(page_field "$k-huge.con" 0 gpa)
	base=$(printf '%#x' $((gpa & ~0x1fffff)))
	hwpoison-guest $vmm_pid "$(printf '%#x' $((gpa + 300 * 4096)))" >/dev/null
	wait_recovered "$k-huge.con" $((base >> 12))
	alive_then=$(grep -c 'INNER-ALIVE survivor=yes' "$k-huge.con")
	# a guest that panicked says nothing more: no waiting for it
	if ! grep -q 'Kernel panic' "$k-huge.con"; then
		wait_for "$k-huge.log" '"event":"poison_spread"' '"status":"done"'
		wait_console "$k-huge.con" 'INNER-ALIVE survivor=yes' $((alive_then + 1))
	fi
	stop_vmm "$k-huge.log" >/dev/null
	n=$(recovered_in "$k-huge.con" $((base >> 12)))
	if [ "$n" -ne 512 ] || grep -qE 'Kernel panic|Oops|BUG:' "$k-huge.con"; then
		last_words "$k-huge.con" 'INNER-PAGE|INNER-SIGBUS|INNER-ROUND|recovery action for'
		json_line "$k-huge.log" '"event":"vmm_exit"' | sed 's/^/  vmm: /'
	fi
	check "$k-huge-thp" "$kver: the target's 512 pages are one 2 MiB-aligned THP ($gpa)" test "$gpa" = "$base"
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
	start_linux "$k-salvage.log" "$k-salvage.con" "$MATRIX_APPEND $THP_TARGET_ARGS" \
		--backing hugetlb-shared
	started "$k" salvage "$k-salvage.con" || return 1
	gpa=$(page_field "$k-salvage.con" 0 gpa)
	base=$(printf '%#x' $((gpa & ~0x1fffff)))
	bad=$(printf '%#x' $((gpa + 300 * 4096)))
	hwpoison-guest $vmm_pid "$bad" >/dev/null
	wait_console "$k-salvage.con" "recovery action for .*: Recovered"
	alive_then=$(grep -c 'INNER-ALIVE survivor=yes' "$k-salvage.con")
	wait_console "$k-salvage.con" 'INNER-ALIVE survivor=yes' $((alive_then + 1))
	# the target's next round touches all 512 pages again: the salvaged ones read back
	rounds_then=$(grep -c 'INNER-ROUND' "$k-salvage.con")
	wait_console "$k-salvage.con" 'INNER-ROUND' $((rounds_then + 1))
	stop_vmm "$k-salvage.log" >/dev/null
	n=$(recovered_in "$k-salvage.con" $((base >> 12)))
	if [ "$n" -ne 1 ] || grep -qE 'Kernel panic|Oops|BUG:' "$k-salvage.con"; then
		last_words "$k-salvage.con" 'INNER-PAGE|INNER-ROUND'
		json_line "$k-salvage.log" '"event":"hugetlb_salvage"' | sed 's/^/  vmm: /'
	fi
	check "$k-salvage-thp" "$kver: the target's 512 pages are one 2 MiB-aligned THP ($gpa)" \
		test "$gpa" = "$base"
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
		salvage_ms="$(json_line "$k-salvage.log" '"event":"hugetlb_salvage"' | sed -n 's/.*"ms":\([0-9.]*\).*/\1/p')"
}

# --- boot time: hwlab-vmm against sid's QEMU, like for like ---------------
# Each VMM boots the same kernel, initramfs and command line (BOOT_APPEND)
# with 128 MiB of RAM on THP (QEMU madvises its RAM MADV_HUGEPAGE; hwlab-vmm
# gets --backing thp; each sample reports the AnonHugePages it had at /init)
# and one vCPU, until the inner init's first line (INNER-BOOT); then it is
# stopped. A sample's time runs from just before the VMM is launched (the
# same hwlab-stamp clock as the console's stamps) to that line's arrival;
# the guest's own uptime at /init rides along. Samples alternate ABBA
# (hwlab, QEMU, QEMU, hwlab, hwlab, QEMU...) so a load that grows or fades
# through the run weighs on both alike; the medians are compared.
BOOT_APPEND="$MATRIX_APPEND hwlab_inner.pages=8"
# BOOT_PARITY_TOL_PCT: hwlab-vmm's median may exceed QEMU's by this much.
# Measured: one sample of a VMM and kernel strays up to 25 % from its
# median under the load of a kernel build beside it, and the ratio of the
# two medians (hwlab-vmm/QEMU), with the same code, was 0.74-0.89 over
# three kernels and two outer boots (before the AGP bridge, pc/pci_conf1.h): +-9 %
# around its middle. 10 % is that spread: noise alone does not fail a VMM
# as fast as QEMU, and a second lost in a 10 s boot still shows.
BOOT_PARITY_TOL_PCT=10
samples=2
[ "$matrix" = full ] && samples=3
[ -n "$samples_opt" ] && samples=$samples_opt

# wait_boot CONSOLE PID BOUND_S : until the inner init's first line, a panic,
# the process's end or BOUND_S seconds of the outer clock (a poll count
# slows down on a loaded machine; the clock does not)
wait_boot() {
	wb_end=$(($(cut -d. -f1 /proc/uptime) + $3))
	while ! grep -q 'INNER-BOOT\|Kernel panic\|Attempted to kill' "$1" &&
		kill -0 "$2" 2>/dev/null && [ "$(cut -d. -f1 /proc/uptime)" -lt "$wb_end" ]; do
		sleep 0.2
	done
}
# thp_kb PID : the process's anonymous THP (kB) now, "?" if it is gone
thp_kb() { sed -n 's/^AnonHugePages: *\([0-9]*\) kB/\1/p' "/proc/$1/smaps_rollup" 2>/dev/null | grep . || echo '?'; }
# kvm_stats PID : what KVM counted for the process's VM so far (its debugfs
# directory PID-FD, vCPU counts summed), as KEY=VALUE: every exit to KVM
# by kind, and the time the vCPU sat halted (what the guest waited on),
# the same for either VMM
KVM_STATS="exits io_exits mmio_exits halt_exits irq_exits irq_window_exits signal_exits
nmi_window_exits request_irq_exits insn_emulation halt_wait_ns pf_taken"
kvm_stats() {
	ks_dir=$(ls -d /sys/kernel/debug/kvm/"$1"-* 2>/dev/null | head -n 1)
	[ -n "$ks_dir" ] || { echo "kvm_stats=none"; return; }
	for ks in $KVM_STATS; do
		[ -f "$ks_dir/$ks" ] && printf '%s=%s ' "$ks" "$(cat "$ks_dir/$ks")"
	done
	echo
}
# cpu_times PID : the process's CPU time so far, all its threads, in ms:
# cpu_ms in all (the vCPU running the guest, KVM, the VMM's own code),
# guest_ms of it running the guest; from /proc/PID/stat's utime + stime and
# guest_time, in USER_HZ (100). (utime less guest_time is no measure of
# the VMM's own time: the kernel scales utime and stime, not guest_time.)
cpu_times() {
	awk '{ printf "cpu_ms=%d guest_ms=%d\n", ($14 + $15) * 10, $43 * 10 }' "/proc/$1/stat" 2>/dev/null
}
# why_no_boot CONSOLE : the panic line, quotes dropped (as "panic: MESSAGE":
# outer-qemu/boot.sh takes a "Kernel panic" line outside the "  con: " lines
# for the outer kernel's own), or nothing
why_no_boot() {
	grep -m1 -E 'Kernel panic|Attempted to kill' "$1" |
		sed 's/^\[t_ns=[0-9]*\] //; s/^\[ *[0-9.]*\] //; s/^Kernel panic - not syncing: /panic: /' |
		tr -d '"' | cut -c1-100
}
# sample_line VMM K I CONSOLE T_START THP_KB STATS [SETUP] : one
# "cell=boot-sample" line: ms to INNER-BOOT (or "none" and why), the
# guest's uptime there, the VMM's THP and KVM's counts then (and hwlab-vmm's
# time from its launch to its vmm_start line, its own setup)
sample_line() {
	sl_t=$(grep -m1 'INNER-BOOT' "$4" | stamp_of)
	if [ -n "$sl_t" ]; then
		# (STATS and SETUP split into their KEY=VALUE words)
		# shellcheck disable=SC2086
		measure "$2" boot-sample vmm="$1" n="$3" to_init_ms="$(ms "$5" "$sl_t")" $8 \
			guest_uptime_s="$(sed -n 's/.*INNER-BOOT .*uptime=\([0-9.]*\).*/\1/p' "$4" | head -n 1)" \
			thp_kb="$6" $7
	else
		sl_why=$(why_no_boot "$4")
		measure "$2" boot-sample vmm="$1" n="$3" to_init_ms=none \
			"reason=\"${sl_why:-no INNER-BOOT within $bs_bound s}\""
		# its first words and its init's, if any (a line that never came,
		# or one that came mangled)
		[ -n "$sl_why" ] || { echo "  con: $1: $(grep -c . "$4") lines"
			{ head -n 3 "$4"; grep -m 3 'INNER-' "$4"; } | cut -c1-160 | sed "s/^/  con: $1: /"; }
	fi
}

# boot_hwlab K I : sample I of K's boot in hwlab-vmm
boot_hwlab() {
	bh=$1-boot-hwlab-$2
	: >"$bh.con"
	t_start=$(echo start | hwlab-stamp | stamp_of)
	# shellcheck disable=SC2086
	timeout -s KILL "$(bound 600)" hwlab-vmm --kernel "$LINUX_KERNEL" --initrd "$LINUX_INITRD" \
		--mem 128 --vcpus 1 $backing --console "$bh.con" --console-stamp \
		--append "$(linux_append "$BOOT_APPEND")" >"$bh.log" 2>"$bh.log.err" &
	vmm_pid=$!
	wait_boot "$bh.con" "$vmm_pid" "$bs_bound"
	bh_pid=$(sed -n 's/.*"event":"vmm_start".*"pid":\([0-9]*\),.*/\1/p' "$bh.log")
	bh_thp=$(thp_kb "${bh_pid:-0}")
	bh_stats="$(kvm_stats "${bh_pid:-0}") $(cpu_times "${bh_pid:-0}")"
	kill -TERM "$vmm_pid" 2>/dev/null
	wait "$vmm_pid"
	bh_setup=$(sed -n 's/.*"event":"vmm_start".*"t_ns":\([0-9]*\)}.*/\1/p' "$bh.log")
	sample_line hwlab "$1" "$2" "$bh.con" "$t_start" "$bh_thp" "$bh_stats" "setup_ms=$(ms "$t_start" "$bh_setup")"
	# the port exits that reached hwlab-vmm, busiest ports first (to_init
	# and beyond: the VMM counts until it is stopped, just after INNER-BOOT)
	bh_exits=$(json_line "$bh.log" '"event":"io_exits"')
	measure "$1" boot-exits vmm=hwlab n="$2" \
		port_exits="$(report_value "$bh_exits" port_exits)" \
		"busiest=\"$(printf '%s\n' "$bh_exits" | sed -n 's/.*"busiest":{\([^}]*\)}.*/\1/p' | tr -d '"')\""
}

# boot_qemu K I : sample I of K's boot in sid's QEMU (-accel kvm -cpu host,
# as compare runs it; the pc machine's own firmware, no devices)
boot_qemu() {
	bq=$1-boot-qemu-$2
	: >"$bq.con"
	rm -f /tmp/qemu-boot.pid
	t_start=$(echo start | hwlab-stamp | stamp_of)
	peer_qemu sid -accel kvm -cpu host -m 128 -smp 1 -nodefaults -nographic -no-reboot \
		-serial stdio -kernel "$LINUX_KERNEL" -initrd "$LINUX_INITRD" \
		-append "$(linux_append "$BOOT_APPEND")" -pidfile /tmp/qemu-boot.pid 2>&1 |
		hwlab-stamp >"$bq.con" &
	vmm_pid=$!
	wait_boot "$bq.con" "$vmm_pid" "$bs_bound"
	bq_pid=$(cat /tmp/qemu-boot.pid 2>/dev/null)
	bq_thp=$(thp_kb "${bq_pid:-0}")
	bq_stats="$(kvm_stats "${bq_pid:-0}") $(cpu_times "${bq_pid:-0}")"
	[ -n "$bq_pid" ] && kill "$bq_pid" 2>/dev/null
	wait "$vmm_pid" 2>/dev/null
	sample_line qemu-sid "$1" "$2" "$bq.con" "$t_start" "$bq_thp" "$bq_stats"
	# a kernel that panics in QEMU panics every time: no more samples
	[ -z "$(why_no_boot "$bq.con")" ]
}

# median FILE : the median of the numbers in FILE, one a line ("none" if
# there are none); of an even count, the mean of the middle two
median() {
	sort -n "$1" | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "none"; exit }
		lo = v[int((NR + 1) / 2)]; hi = v[int(NR / 2) + 1]
		if (hi == 999999999) print "over"
		else printf "%d\n", (lo + hi) / 2 }'
}

# boot_parity K : $samples boots of K in each VMM, alternating; the medians,
# and the check K-boot-parity
boot_parity() {
	k=$1
	bs_log=$k-boot-samples.txt
	: >"$bs_log"
	qemu_ok=1 qemu_why=
	if ! peer_ready sid; then
		qemu_ok=0 qemu_why=$peer_reason
	else
		qver=$(peer_version sid qemu-system-x86)
	fi
	bp_t0=$(cut -d. -f1 /proc/uptime)
	# a sample's bound: 240 s (times the time factor) for the first; then
	# 4 times the slowest boot of either VMM so far, at least 60 s: a VMM
	# that takes longer is slower than the other by more than any
	# tolerance, and counts as slower (QEMU 11.1 once sat 10 minutes on a
	# stock kernel here), without costing the run 10 minutes more
	bs_bound=$(bound 240)
	i=1
	while [ $i -le "$samples" ]; do
		if [ $((i % 2)) = 1 ]; then order="hwlab qemu"; else order="qemu hwlab"; fi
		for v in $order; do
			if [ "$v" = hwlab ]; then
				boot_hwlab "$k" $i | tee -a "$bs_log"
			elif [ $qemu_ok = 1 ]; then
				boot_qemu "$k" $i | tee -a "$bs_log"
				why=$(why_no_boot "$k-boot-qemu-$i.con")
				if [ -n "$why" ]; then
					qemu_ok=0 qemu_why="QEMU $qver cannot boot $kver: $why"
					grep -E 'XSAVE|panic|Attempted' "$k-boot-qemu-$i.con" | head -n 4 | sed 's/^/  con: qemu: /'
				fi
			fi
			slowest=$(sed -n 's/.* cell=boot-sample .*to_init_ms=\([0-9][0-9]*\).*/\1/p' "$bs_log" | sort -n | tail -n 1)
			if [ -n "$slowest" ]; then
				bs_bound=$((slowest * 4 / 1000))
				[ $bs_bound -ge 60 ] || bs_bound=60
			fi
		done
		i=$((i + 1))
	done
	# per VMM: the samples in the order taken (a boot that did not reach
	# init within its bound counts as slower than every one that did)
	for v in hwlab qemu-sid; do
		grep " cell=boot-sample vmm=$v " "$bs_log" >"$k-$v.samples"
		sed -n 's/.* to_init_ms=\([0-9][0-9]*\).*/\1/p' "$k-$v.samples" >"$k-$v.ms"
		n_none=$(grep -c 'to_init_ms=none' "$k-$v.samples")
		i=0
		while [ $i -lt "$n_none" ]; do echo 999999999 >>"$k-$v.ms"; i=$((i + 1)); done
		sed -n 's/.* guest_uptime_s=\([0-9.]*\).*/\1/p' "$k-$v.samples" | awk '{ printf "%d\n", $1 * 1000 }' >"$k-$v.up"
		# every exit to KVM, and those that reached the VMM (hwlab-vmm's port exits)
		sed -n 's/.* exits=\([0-9][0-9]*\) .*/\1/p' "$k-$v.samples" >"$k-$v.exits"
	done
	grep " cell=boot-exits " "$bs_log" | sed -n 's/.* port_exits=\([0-9][0-9]*\) .*/\1/p' >"$k-hwlab.vmm-exits"
	hw_med=$(median "$k-hwlab.ms") q_med=$(median "$k-qemu-sid.ms")
	hw_up=$(median "$k-hwlab.up") q_up=$(median "$k-qemu-sid.up")
	# ("none" for a VMM with no boot at all; "over": its median sample
	# did not boot within its bound)
	[ "$hw_med" = over ] && hw_med=none
	[ "$q_med" = over ] && q_med=">${bs_bound}000"
	measure "$k" boot vmm=hwlab to_init_ms="$hw_med" guest_uptime_ms="$hw_up" \
		kvm_exits="$(median "$k-hwlab.exits")" vmm_exits="$(median "$k-hwlab.vmm-exits")" \
		samples="$(tr '\n' ',' <"$k-hwlab.ms" | sed 's/999999999/none/g; s/,$//')" \
		"version=\"$kver $kpkg\""
	if [ $qemu_ok = 0 ] && ! grep -q 'to_init_ms=[0-9]' "$k-qemu-sid.samples"; then
		measure "$k" boot vmm=qemu-sid to_init_ms=none "qemu=\"$qver\"" "reason=\"$qemu_why\""
		skip "$k-boot-parity" "$qemu_why"
	else
		measure "$k" boot vmm=qemu-sid to_init_ms="$q_med" guest_uptime_ms="$q_up" \
			kvm_exits="$(median "$k-qemu-sid.exits")" \
			samples="$(tr '\n' ',' <"$k-qemu-sid.ms" | sed 's/999999999/none/g; s/,$//')" \
			"qemu=\"$qver\"" "version=\"$kver $kpkg\""
		if [ "$hw_med" = none ]; then
			fail "$k-boot-parity" "$kver reaches the inner /init in hwlab-vmm (no sample did)"
		else
			q_lim=$q_med
			case $q_med in '>'*) q_lim=${q_med#>} ;; esac
			check "$k-boot-parity" "$kver to the inner /init, median of $samples: hwlab-vmm $hw_med ms <= QEMU $qver $q_med ms + $BOOT_PARITY_TOL_PCT % (guest uptime at /init: $hw_up ms, $q_up ms)" \
				test "$hw_med" -le $((q_lim * (100 + BOOT_PARITY_TOL_PCT) / 100))
		fi
	fi
	echo "  boot samples of $k: $(($(cut -d. -f1 /proc/uptime) - bp_t0)) s"
}

# ras_cells K CASE CONSOLE GPA LOG : what the guest's own rasdaemon recorded
# (ras_check: its mce_record and memory_failure_event rows), stock guests only
ras_cells() {
	[ "$1" = ours ] && return
	ras_check "$1-$2" "$2" "$3" "$4" "$5"
}

for k in $kernels; do
	echo "== guest $k"
	if ! use_kernel "$k"; then
		skip "$k-boot" "$skip_reason"
		measure "$k" boot vmm=hwlab to_init_ms=none "reason=\"$skip_reason\""
		continue
	fi
	echo "  $kver: $LINUX_KERNEL, $LINUX_INITRD"
	boot_parity "$k"
	[ "$boot_only" = 1 ] && continue
	late_cell "$k" || continue
	echo 1 >/proc/sys/vm/memory_failure_early_kill
	early_cell "$k" 1
	echo 0 >/proc/sys/vm/memory_failure_early_kill
	case "$matrix $cases " in full*" salvage "* | quick*)
		reserve_hugepages 65
		salvage_cell "$k"
		echo 0 >/proc/sys/vm/nr_hugepages
		;;
	esac
	[ "$matrix" = full ] || continue
	case " $cases " in *" smp "*) smp_cell "$k" ;; esac
	case " $cases " in *" huge "*)
		reserve_hugepages 65
		huge_cell "$k"
		echo 0 >/proc/sys/vm/nr_hugepages
		;;
	esac
done

# the kernel's default poll, as a user's guest has it: an AO waits for it.
# The guests wait side by side, so the matrix waits one poll, not four.
if [ "$matrix" = full ] && [ -z "${cases##*default*}" ] && [ "$boot_only" != 1 ]; then
	echo "== the default check_interval (one AO per kernel, side by side)"
	echo 1 >/proc/sys/vm/memory_failure_early_kill
	pids=
	for k in $kernels; do
		use_kernel "$k" || continue
		early_cell "$k" default >"$k-default.out" 2>&1 &
		pids="$pids $!"
	done
	# the poll may keep every guest quiet for minutes: say so on the console,
	# so that a silent outer VM is not taken for a frozen one
	while [ -n "$(for p in $pids; do kill -0 "$p" 2>/dev/null && echo "$p"; done)" ]; do
		sleep 30
		echo "  default poll: waiting for$(for p in $pids; do kill -0 "$p" 2>/dev/null && printf " %s" "$p"; done)"
	done
	wait
	echo 0 >/proc/sys/vm/memory_failure_early_kill
	for f in ./*-default.out; do
		cat "$f"
		# each ran in a subshell: its counts come back through its lines
		hwlab_passes=$((hwlab_passes + $(grep -c '^HWLAB-CHECK PASS' "$f")))
		hwlab_failures=$((hwlab_failures + $(grep -c '^HWLAB-CHECK FAIL' "$f")))
	done
fi
finish
