# guest_matrix.sh's boot time: each kernel booted in hwlab-vmm and in sid's
# QEMU, samples in turn, the medians and the check K-boot-parity. Sourced
# by guest_matrix.sh.

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
# wait_boot CONSOLE PID BOUND_S : until the inner init's first line, a panic,
# the process's end or BOUND_S seconds of the outer clock (a poll count
# slows down on a loaded machine; the clock does not)
wait_boot() {
	wb_end=$(($(cut -d. -f1 /proc/uptime) + $3))
	while ! grep -q "$REC"'INNER-BOOT\|Kernel panic\|Attempted to kill' "$1" &&
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
# sample_line VMM K I CONSOLE T_START THP_KB STATS [SETUP] : one
# "cell=boot-sample" line: ms to INNER-BOOT (or "none" and why), the
# guest's uptime there, the VMM's THP and KVM's counts then (and hwlab-vmm's
# time from its launch to its vmm_start line, its own setup)
sample_line() {
	sl_t=$(grep -m1 "$REC"'INNER-BOOT' "$4" | stamp_of)
	if [ -n "$sl_t" ]; then
		# (STATS and SETUP split into their KEY=VALUE words)
		# shellcheck disable=SC2086
		measure "$2" boot-sample vmm="$1" n="$3" to_init_ms="$(ms "$5" "$sl_t")" $8 \
			guest_uptime_s="$(boot_uptime "$4")" \
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
	bh_pid=$(json-field --live "$bh.log" pid event=vmm_start)
	bh_thp=$(thp_kb "${bh_pid:-0}")
	bh_stats="$(kvm_stats "${bh_pid:-0}") $(cpu_times "${bh_pid:-0}")"
	kill -TERM "$vmm_pid" 2>/dev/null
	wait "$vmm_pid"
	bh_setup=$(json-field "$bh.log" t_ns event=vmm_start)
	sample_line hwlab "$1" "$2" "$bh.con" "$t_start" "$bh_thp" "$bh_stats" "setup_ms=$(ms "$t_start" "$bh_setup")"
	# the port exits that reached hwlab-vmm, busiest ports first (to_init
	# and beyond: the VMM counts until it is stopped, just after INNER-BOOT)
	bh_exits=$(json_line "$bh.log" '"event":"io_exits"')
	measure "$1" boot-exits vmm=hwlab n="$2" \
		port_exits="$(report_value "$bh_exits" port_exits)" \
		"busiest=\"$(report_value "$bh_exits" busiest | tr -d '"{}')\""
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
