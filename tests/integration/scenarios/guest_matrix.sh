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
# hwlab.matrix_cases=a,b: only those of full's cases (smp, huge, salvage, smca,
# lost2m, default; smca and lost2m alone skip the boot samples and the late
# and early cells)
# hwlab.matrix_backing=KIND: the late, early and smp guests' RAM, thp
# unless told: QEMU maps guest RAM with MADV_HUGEPAGE, and so the boot times
# compare like with like (trixie's 6.12 in one outer boot: 17.2 s on anon
# 4 KiB pages against QEMU 11.1's 11.1 s; 10.4 s on thp against its 10.1 s:
# each first touch of guest RAM is a nested page fault under TCG)
# hwlab.matrix_samples=N: boot samples per VMM and kernel (quick 2, full 3)
# hwlab.matrix_boot_only=1: only the boot samples and K-boot-parity
# hwlab.matrix_smca_events=N: AOs in the smca cell (quick 3, full 10)
# hwlab.matrix_lost2m=quiet|console|both: the lost2m cell's runs (default
# both: loglevel=3, and the kernel's own console)
matrix=quick only= cases="smp huge salvage smca lost2m default" backing="--backing thp" samples_opt= boot_only=
smca_events_opt= lost2m_runs="1 0"
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	hwlab.matrix=*) matrix=${arg#*=} ;;
	hwlab.matrix_kernels=*) only=$(echo "${arg#*=}" | tr , ' ') ;;
	hwlab.matrix_cases=*) cases=$(echo "${arg#*=}" | tr , ' ') ;;
	hwlab.matrix_backing=*) backing="--backing ${arg#*=}" ;;
	hwlab.matrix_samples=*) samples_opt=${arg#*=} ;;
	hwlab.matrix_boot_only=*) boot_only=${arg#*=} ;;
	hwlab.matrix_smca_events=*) smca_events_opt=${arg#*=} ;;
	hwlab.matrix_lost2m=quiet) lost2m_runs=1 ;;
	hwlab.matrix_lost2m=console) lost2m_runs=0 ;;
	hwlab.matrix_lost2m=both) lost2m_runs="1 0" ;;
	hwlab.matrix_lost2m=*) echo "HWLAB-ERROR hwlab.matrix_lost2m must be quiet, console or both, not '${arg#*=}'"; exit 2 ;;
	esac
done
case $matrix in
quick) kernels="sid" ;;
full) kernels="ours bookworm trixie sid" ;;
*) echo "HWLAB-ERROR hwlab.matrix must be quick or full, not '$matrix'"; exit 2 ;;
esac
case $smca_events_opt in
'' | [1-9] | [1-9][0-9]) ;;
*) echo "HWLAB-ERROR hwlab.matrix_smca_events must be a whole number 1..99, not '$smca_events_opt'"; exit 2 ;;
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
# its helpers, a job each: the cells on the guest's own RAM, the hugetlb
# cells, the boot-time samples
. /hwlab/scenarios/_matrix_cells.sh
. /hwlab/scenarios/_matrix_huge.sh
. /hwlab/scenarios/_matrix_boot.sh
samples=2 smca_events=3
[ "$matrix" = full ] && samples=3 smca_events=10
[ -n "$smca_events_opt" ] && smca_events=$smca_events_opt
[ -n "$samples_opt" ] && samples=$samples_opt

gpa_pfn() { printf '%#x' $(($1 >> 12)); }
# measure KERNEL CELL KEY=VALUE... : one line of the table
measure() {
	m_k=$1 m_c=$2
	shift 2
	echo "HWLAB-MEASURE guest-matrix kernel=$m_k cell=$m_c $*"
}
# boot_uptime CONSOLE : the guest's uptime (s) at its inner /init
boot_uptime() { sed -n "s/${REC}INNER-BOOT .*uptime=\([0-9.]*\).*/\3/p" "$1" | head -n 1; }
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

# why_no_boot CONSOLE [ERE] : the first line matching ERE (default: a panic)
# as a reason (as_reason), quotes dropped, or nothing
why_no_boot() {
	grep -m1 -E "${2:-Kernel panic|Attempted to kill}" "$1" | as_reason | tr -d '"' | cut -c1-100
}
# poison_page CONSOLE IDX : poison the target's page IDX (sets gpa, pfn, t0)
poison_page() {
	gpa=$(page_field "$1" "$2" gpa)
	pfn=$(gpa_pfn "$gpa")
	poison_guest "$vmm_pid" "$gpa"
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
	# hwlab.matrix_cases=smca and/or lost2m alone (full): those cells
	# without the rest
	if [ "$matrix" = full ] && [ -z "$(echo $cases | tr ' ' '\n' | grep -vxE 'smca|lost2m')" ]; then
		case " $cases " in *" smca "*) smca_cell "$k" ;; esac
		case " $cases " in *" lost2m "*) lost2m_cells "$k" ;; esac
		continue
	fi
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
	case "$matrix $cases " in full*" smca "* | quick*) smca_cell "$k" ;; esac
	[ "$matrix" = full ] || continue
	case " $cases " in *" smp "*) smp_cell "$k" ;; esac
	case " $cases " in *" huge "*)
		reserve_hugepages 65
		huge_cell "$k"
		echo 0 >/proc/sys/vm/nr_hugepages
		;;
	esac
	case " $cases " in *" lost2m "*) lost2m_cells "$k" ;; esac
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
