#!/usr/bin/env bash
# Boot the outer VM under TCG and run one scenario in it.
#
# The host has no hardware nesting, so the outer VM is emulated (-accel tcg)
# with an SVM-capable CPU (-cpu max): kvm_amd runs inside it on emulated SVM.
# The CPU model, the image, the RAM, more kernel arguments and the default
# timeout are the scenario's row in tests/integration/scenarios.table
# (no_kvm boots without SVM to see the VMM's error; hugepages_1g with the RAM
# for 1 GiB hugetlb pages and hugepagesz=1G hugepages=3 to reserve them at
# boot). A name the table does not list still boots, with -cpu max and
# -m 1G, so that the VM's /init reports it as unknown.
#
# Usage: outer-qemu/boot.sh SCENARIO LOGFILE [TIMEOUT_SECONDS]
# Exit:  the scenario's exit status; 124 on a hung VM, 125 on a kernel panic
#        or a VM that stopped without reporting, 126 on a frozen VM (see
#        watch_silence), 2 on a bad environment.
# Env:   HWLAB_APPEND (more outer kernel arguments), HWLAB_TCG_OPTS (more
#        -accel tcg options, ",thread=single" say: outer-qemu/freeze-rate.sh),
#        HWLAB_SILENCE, HWLAB_NMI_WAIT (watch_silence), HWLAB_HIGHRES=on
#        (the outer kernel's one-shot tick, which host QEMU can lose: below),
#        HWLAB_HOST (the outer kernel users pick: 6.1, 6.12, 7.2 ours, or
#        bookworm, trixie, sid Debian's stock; build/hosts/HOST from
#        scripts/host-kernel.sh, make host-kernel HOST=...; default 6.1, our
#        build/bzImage), HWLAB_KERNEL (another image of that host, the debug
#        kernel's build/debug/bzImage say), HWLAB_TIME_FACTOR (a whole
#        number: a slower kernel's bounds, default 1; below).
set -uo pipefail
scenario=$1 log=$2
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/tests/lib/scenario_table.sh"
qemu=${QEMU:-qemu-system-x86_64}

die() { echo "boot: error: $*" >&2; exit 2; }
command -v "$qemu" >/dev/null || die "$qemu not found (make deps installs qemu-system-x86)"
# The host: its kernel, the modules it loads (an initramfs fragment appended
# to the image: the kernel unpacks concatenated archives) and the features
# its checks may count on (kernel/features), told to the VM on its command
# line (hwlab.host=, hwlab.host_features=; the scenarios' need_host).
host=${HWLAB_HOST:-6.1}
case $host in 6.1 | 6.12 | 7.2 | bookworm | trixie | sid) ;;
*) die "HWLAB_HOST must be 6.1, 6.12, 7.2, bookworm, trixie or sid, not '$host'" ;;
esac
host_dir=$here/build/hosts/$host
# Debian's stock 7.2.13 (sid) and 6.12.118 (trixie) panicked under
# multi-threaded TCG ("Oops: int3" in __schedule: sid 3 of about 25 boots,
# trixie once) when a KVM VM switched their preempt-notifier static key:
# they boot on one CPU, /init holds a VM (outer-qemu/kvm_hold.c) and then
# brings the second CPU up. (bookworm's and ours never showed it.)
host_args=
case $host in sid | trixie) host_args="maxcpus=1 hwlab.kvm_hold=1" ;; esac
if [ -n "${HWLAB_HOST:-}" ]; then
	kernel=${HWLAB_KERNEL:-$host_dir/bzImage}
else
	kernel=${HWLAB_KERNEL:-$here/build/bzImage}
fi
[ -f "$kernel" ] || die "no kernel at $kernel (run 'make kernel', or 'make host-kernel HOST=$host')"
[ -f "$host_dir/features" ] || die "no $host_dir/features (run 'make host-kernel HOST=$host')"
host_features=$(paste -sd, "$host_dir/features")
scenario_rows >/dev/null || die "malformed $scenario_table (see above)"
read -r cpu image mem append table_limit < <(scenario_row "$scenario")
cpu=${cpu:-max} mem=${mem:-1G}
# the row's arguments, joined by commas there
[ "${append:--}" = - ] && append= || append=${append//,/ }
# the comparison's image also carries the distro's QEMU; the upstream image,
# upstream's mm selftests (outer-qemu/mkinitramfs.sh)
case ${image:-base} in
compare) initrd=${HWLAB_INITRD:-$here/build/initramfs-compare.cpio.gz} ;;
upstream) initrd=${HWLAB_INITRD:-$here/build/initramfs-upstream.cpio.gz} ;;
*) initrd=${HWLAB_INITRD:-$here/build/initramfs.cpio.gz} ;;
esac
[ -f "$initrd" ] || die "no initramfs at $initrd (run 'make initramfs')"
if [ -s "$host_dir/modules.cpio.gz" ] && [ "$(gzip -dc "$host_dir/modules.cpio.gz" | wc -c)" -gt 0 ]; then
	mkdir -p "$(dirname "$log")"
	cat "$initrd" "$host_dir/modules.cpio.gz" >"$log.initrd"
	initrd=$log.initrd
fi
# A debug kernel (make test-debug-kernel: lockdep, DEBUG_VM) does everything
# more slowly: HWLAB_TIME_FACTOR multiplies the default boot timeout and the
# silence before an NMI here, and every bound a scenario waits with in the
# VM (hwlab.time_factor=, read by outer-qemu/init; tests/integration/
# scenarios/_lib.sh's bound). Bounds only: each wait still ends on its state.
factor=${HWLAB_TIME_FACTOR:-1}
case $factor in '' | *[!0-9]* | 0*) die "HWLAB_TIME_FACTOR must be a whole number from 1, not '$factor'" ;; esac
limit=${3:-$(( ${table_limit:-300} * factor ))}
silence=${HWLAB_SILENCE:-$((180 * factor))}
factor_arg=
[ "$factor" -eq 1 ] || factor_arg="hwlab.time_factor=$factor"

# TCG's TSC runs at the host's rate, but calibrating it against the emulated
# PIT fails now and then on a loaded host; the kernel then falls back to
# jiffies and KVM's timekeeping stalls the nested guest. Tell the kernel the
# frequency and trust it instead of letting it guess.
mhz=$(awk -F: '/^cpu MHz/ { printf "%d", $2; exit }' /proc/cpuinfo 2>/dev/null)
clock_args="tsc=reliable${mhz:+ tsc_early_khz=$((mhz * 1000))}"
# The outer kernel's tick must be the APIC timer in periodic mode, re-armed
# by host QEMU itself, not a one-shot timer that the kernel re-arms from its
# own interrupt handler (what high-resolution timers do): QEMU 7.2's TCG can
# lose that interrupt, and then nothing ever arms the timer again. Seen here
# as the outer VM's "freeze" (CPU 0 halted with IF set, GIF set, NMI not
# blocked, the timer's vector 236 in IRR, the vCPU thread asleep in
# qemu_wait_io_event; outer-qemu/tcg_flags.py): helper_vmrun() sets
# CPU_INTERRUPT_VIRQ in cs->interrupt_request with a plain read-modify-write
# on the vCPU thread, outside the iothread lock, whenever KVM asks for an
# interrupt window (V_IRQ); a CPU_INTERRUPT_POLL that the APIC timer sets from
# the main loop at that moment is overwritten, so the timer's vector sits in
# IRR with no request to take it. The window is widest when the host
# preempts the vCPU thread inside it: a loaded CI machine. (Later QEMU
# updates interrupt_request atomically.) With highres=off the outer kernel
# (CONFIG_HZ_PERIODIC) keeps the APIC timer periodic, so the next tick, 4 ms
# later, raises the request again and the lost one costs one tick.
# HWLAB_HIGHRES=on boots as before, to measure the freeze
# (outer-qemu/freeze-rate.sh).
# Debian's stock kernels are tickless (NO_HZ_IDLE): nohz=off keeps their
# tick periodic too (ours is HZ_PERIODIC, where it changes nothing).
[ "${HWLAB_HIGHRES:-off}" = on ] || clock_args="$clock_args highres=off nohz=off"

mkdir -p "$(dirname "$log")"
# A monitor, for a VM that goes silent: the lost timer interrupt above left
# the outer VM with CPU 0 halted in native_safe_halt, IF and GIF set, its APIC
# timer's vector pending in IRR and no tick ever again. An NMI from the
# monitor then seems unanswered too: the NMI handler's printk is deferred to
# an irq_work that only the next tick would run. After HWLAB_SILENCE (180
# times HWLAB_TIME_FACTOR) seconds without a console byte, record what its
# CPUs and local APICs hold in LOG.hang and send an NMI. A live kernel answers an NMI on its console
# ("NMI received for unknown reason"), so a VM still silent HWLAB_NMI_WAIT
# (60) seconds later is frozen: stop it and exit 126, so that the runner can
# tell a frozen emulator from a failure.
monitor=$log.monitor
# the kernel's System.map, beside the tree it was built in (kernel/build.sh
# writes kernel.tree next to the bzImage it publishes)
symbols=$(cat "$(dirname "$kernel")/kernel.tree" 2>/dev/null)/System.map
rm -f "$monitor" "$log.hang" "$log.frozen"
# What host QEMU's own threads are doing, to tell a vCPU thread asleep
# waiting for work it was never told of (a lost wakeup, or GIF clear) from
# one busy or blocked elsewhere: each thread's state, CPU time over 5 s,
# kernel wait channel, and (with gdb) its user stack.
# thread_stat /proc/PID/task/TID : its state, utime and stime (ticks); the
# fields after its name, which has blanks in it ("CPU 0/TCG")
thread_stat() { sed 's/.*) //' "$1/stat" 2>/dev/null | cut -d' ' -f1,12,13; }
host_qemu_threads() {
	local pid t
	# QEMU itself, not the timeout(1) that started it with the same arguments
	for pid in $(pgrep -f -- "-monitor unix:$monitor,"); do
		[ "$(cat "/proc/$pid/comm" 2>/dev/null)" != timeout ] && break
		pid=
	done
	[ -n "$pid" ] || return 0
	echo "=== host QEMU (pid $pid): thread, state, utime+stime (ticks) now and 5 s later, wchan"
	for t in /proc/$pid/task/*; do
		echo "$(basename "$t") $(thread_stat "$t") $(cat "$t/wchan" 2>/dev/null)"
	done
	sleep 5
	for t in /proc/$pid/task/*; do
		echo "$(basename "$t") $(thread_stat "$t") $(cat "$t/comm" 2>/dev/null)"
	done
	command -v gdb >/dev/null &&
		timeout 60 gdb -q -p "$pid" -batch -ex "info threads" -ex "thread apply all bt 12" 2>&1 | tail -n 150
	# what no monitor command prints: TCG's GIF, NMI blocking and SVM
	# interrupt masking for CPU 0, found in QEMU's memory by the RIP and RSP
	# the monitor last printed for it
	local rip rsp
	read -r rip rsp < <(awk '/^CPU#/ { cpu0 = ($0 ~ /^CPU#0/) }
		cpu0 { for (i = 1; i <= NF; i++) { split($i, kv, "=")
			if (kv[1] == "RIP") rip = kv[2]; if (kv[1] == "RSP") rsp = kv[2] } }
		END { print rip, rsp }' "$log.hang")
	[ -n "$rsp" ] && timeout 120 python3 "$here/outer-qemu/tcg_flags.py" "$pid" "$rip" "$rsp"
}
watch_silence() {
	local size=-1 now quiet=0 nudged=0
	while sleep 10; do
		now=$(stat -c %s "$log" 2>/dev/null || echo 0)
		if [ "$now" != "$size" ]; then
			size=$now quiet=0 nudged=0
			continue
		fi
		quiet=$((quiet + 10))
		if [ $nudged -eq 1 ] && [ $quiet -ge "${HWLAB_NMI_WAIT:-60}" ]; then
			echo "=== $(date -u +%FT%TZ): no answer to the NMI in ${HWLAB_NMI_WAIT:-60}s: frozen" >>"$log.hang"
			: >"$log.frozen"
			pkill -KILL -f -- "-monitor unix:$monitor," 2>/dev/null
			return
		fi
		[ $nudged -eq 0 ] && [ $quiet -ge "$silence" ] || continue
		nudged=1 quiet=0
		{
			echo "=== $(date -u +%FT%TZ): no console output for ${silence}s"
			python3 "$here/outer-qemu/monitor.py" --symbols "$symbols" "$monitor" \
				"info registers -a" "info lapic 0" "info lapic 1" 'x/256gx $esp' "nmi"
			host_qemu_threads
		} >>"$log.hang" 2>&1
		echo "boot: warning: scenario '$scenario': the VM was silent for ${silence}s;" \
			"CPU and APIC state in $log.hang, NMI sent" >&2
	done
}
watch_silence &
watcher=$!
timeout --foreground -k 5 "$limit" "$qemu" -accel "tcg${HWLAB_TCG_OPTS:-}" -cpu "$cpu" -smp 2 -m "$mem" \
	-name hwlab-outer,debug-threads=on -nographic -no-reboot -nodefaults -serial stdio \
	-monitor "unix:$monitor,server=on,wait=off" \
	-kernel "$kernel" -initrd "$initrd" \
	-append "console=ttyS0 panic=-1 oops=panic $clock_args hwlab.scenario=$scenario hwlab.host=$host hwlab.host_features=${host_features:--}${host_args:+ $host_args}${append:+ $append} $factor_arg ${HWLAB_APPEND:-}" \
	</dev/null >"$log" 2>&1
qrc=$?
kill "$watcher" 2>/dev/null
wait "$watcher" 2>/dev/null
rm -f "$monitor" "$log.initrd"
[ -s "$log.hang" ] && echo "boot: scenario '$scenario' went silent during the run; see $log.hang" >&2
tr -d '\r' <"$log" >"$log.tmp" && mv "$log.tmp" "$log"

if [ -e "$log.frozen" ]; then
	echo "boot: error: scenario '$scenario': the outer VM froze (silent, and no answer to an NMI);" \
		"its state is in $log.hang; last lines of $log:" >&2
	tail -n 5 "$log" >&2
	exit 126
fi
if [ $qrc -eq 124 ] || [ $qrc -eq 137 ]; then
	echo "boot: error: scenario '$scenario' did not finish within ${limit}s (VM hung?); last lines of $log:" >&2
	tail -n 15 "$log" >&2
	exit 124
fi
# A guest's console, which scenarios echo as "  con: " lines, may hold the
# inner kernel's own panic: that one is the scenario's to judge, not ours.
# (awk and sed -n read to the end: grep -q or head would stop early, and
# pipefail would then count the writer's SIGPIPE)
if grep -v '^  con: ' "$log" | awk '/Kernel panic/ { found = 1 } END { exit !found }'; then
	echo "boot: error: the outer kernel panicked in scenario '$scenario'; see $log:" >&2
	grep -A 12 'Kernel panic' "$log" | sed -n '1,20p' >&2
	exit 125
fi
rc=$(sed -n 's/^HWLAB-EXIT rc=\([0-9]*\).*/\1/p' "$log" | tail -n 1)
if [ -z "$rc" ]; then
	echo "boot: error: VM stopped (qemu exit $qrc) without reporting a result; last lines of $log:" >&2
	tail -n 15 "$log" >&2
	exit 125
fi
exit "$rc"
