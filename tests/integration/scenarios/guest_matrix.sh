# The guests users run, in hwlab-vmm: our tinyconfig bzImage and the newest
# stock kernel of Debian bookworm, trixie and sid (scripts/stock-kernels.sh,
# /hwlab/data/stock/SUITE/), each booted to the inner /init and poisoned:
# late kill (AR), early kill (AO: an AMD deferred error the guest's poll
# finds, check_interval tuned to 1 s), two vCPUs, and hugetlb-backed RAM,
# every outcome read from the guest's own log lines as linux_guest does. Per
# kernel, its boot time in hwlab-vmm and in sid's QEMU (11.1, its own
# sysroot under chroot: peer_qemu) in this same outer-VM boot, and the time
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
matrix=quick only= cases="smp huge salvage default" backing="--backing thp"
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	hwlab.matrix=*) matrix=${arg#*=} ;;
	hwlab.matrix_kernels=*) only=$(echo "${arg#*=}" | tr , ' ') ;;
	hwlab.matrix_cases=*) cases=$(echo "${arg#*=}" | tr , ' ') ;;
	hwlab.matrix_backing=*) backing="--backing ${arg#*=}" ;;
	esac
done
case $matrix in
quick) kernels="sid" ;;
full) kernels="ours bookworm trixie sid" ;;
*) echo "HWLAB-ERROR hwlab.matrix must be quick or full, not '$matrix'"; exit 2 ;;
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
	measure "$k" boot vmm=hwlab to_init_ms="$(ms "$t_start" "$t_boot")" guest_uptime_s="$uptime" \
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
	start_linux "$k-huge.log" "$k-huge.con" "$MATRIX_APPEND hwlab_inner.thp=1 hwlab_inner.pages=512 \
hwlab_inner.restart=0 hwlab_inner.on_sigbus=recover hwlab_inner.interval_ms=200" --backing hugetlb
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
		# what the guest said when it went wrong, without the 512 pages' lines
		grep -vE 'INNER-PAGE|INNER-SIGBUS|INNER-ROUND|recovery action for' "$k-huge.con" |
			grep -E -B2 -A12 'Kernel panic|Oops|BUG:|Machine check|Hardware Error\]: CPU' |
			head -n 60 | sed 's/^/  con: /'
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
	start_linux "$k-salvage.log" "$k-salvage.con" "$MATRIX_APPEND hwlab_inner.thp=1 \
hwlab_inner.pages=512 hwlab_inner.restart=0 hwlab_inner.on_sigbus=recover hwlab_inner.interval_ms=200" \
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
		grep -vE 'INNER-PAGE|INNER-ROUND' "$k-salvage.con" |
			grep -E -B2 -A12 'Kernel panic|Oops|BUG:|Machine check|Hardware Error\]: CPU' |
			head -n 60 | sed 's/^/  con: /'
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

# qemu_boot_cell K : the same kernel, initramfs and append in sid's QEMU
# (-accel kvm -cpu host, as compare runs it): time to the inner /init
qemu_boot_cell() {
	k=$1
	if ! peer_ready sid; then
		skip "$k-qemu-boot" "$peer_reason"
		measure "$k" boot vmm=qemu-sid to_init_ms=none "reason=\"$peer_reason\""
		return
	fi
	qver=$(peer_version sid qemu-system-x86)
	: >"$k-qemu.con"
	t_start=$(echo start | hwlab-stamp | stamp_of)
	peer_qemu sid -accel kvm -cpu host -m 128 -smp 1 -nodefaults -nographic -no-reboot \
		-serial stdio -kernel "$LINUX_KERNEL" -initrd "$LINUX_INITRD" \
		-append "$(linux_append "$MATRIX_APPEND hwlab_inner.pages=8")" -pidfile /tmp/qemu-boot.pid 2>&1 |
		hwlab-stamp >"$k-qemu.con" &
	vmm_pid=$!
	# until its init or its panic, or QEMU ends; bounded by the clock (240 s
	# times the time factor; a loaded machine slows a poll count down too)
	qb_end=$(($(cut -d. -f1 /proc/uptime) + $(bound 240)))
	while ! grep -q 'INNER-BOOT\|Kernel panic\|Attempted to kill' "$k-qemu.con" &&
		kill -0 "$vmm_pid" 2>/dev/null && [ "$(cut -d. -f1 /proc/uptime)" -lt "$qb_end" ]; do
		sleep 0.5
	done
	t_boot=$(grep -m1 'INNER-BOOT' "$k-qemu.con" | stamp_of)
	kill "$(cat /tmp/qemu-boot.pid 2>/dev/null)" 2>/dev/null
	wait "$vmm_pid" 2>/dev/null
	if [ -n "$t_boot" ]; then
		measure "$k" boot vmm=qemu-sid to_init_ms="$(ms "$t_start" "$t_boot")" \
			"qemu=\"$qver\"" "version=\"$kver $kpkg\""
	else
		# (as "panic: MESSAGE": outer-qemu/boot.sh takes a "Kernel panic"
		# line outside the "  con: " lines for the outer kernel's own)
		why=$(grep -m1 -E 'Kernel panic|Attempted to kill|XSAVE' "$k-qemu.con" |
			sed 's/^\[t_ns=[0-9]*\] //; s/^\[ *[0-9.]*\] //; s/^Kernel panic - not syncing: /panic: /' |
			tr -d '"' | cut -c1-100)
		measure "$k" boot vmm=qemu-sid to_init_ms=none "qemu=\"$qver\"" \
			"reason=\"${why:-no INNER-BOOT within $(bound 240) s}\""
		# its last words, whatever they were
		grep -E 'XSAVE|panic|Attempted' "$k-qemu.con" | head -n 4 | sed 's/^/  con: qemu: /'
		[ -n "$why" ] || tail -n 12 "$k-qemu.con" | sed 's/^/  con: qemu: /'
	fi
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
	qemu_boot_cell "$k"
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
if [ "$matrix" = full ] && [ -z "${cases##*default*}" ]; then
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
		echo "  default poll: waiting for$(for p in $pids; do kill -0 "$p" 2>/dev/null && echo " $p"; done)"
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
