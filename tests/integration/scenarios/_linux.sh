# The Linux guest (guest-linux/): the project's bzImage, or a stock kernel,
# booted by hwlab-vmm to the inner /init, and what its console says.
# Sourced by _lib.sh (it uses its bound, stop_vmm and json_line).
LINUX_KERNEL=/hwlab/data/bzImage
LINUX_INITRD=/hwlab/data/inner-initramfs.cpio.gz
# The guest's TSC runs at the outer VM's rate; calibrating it on the PIT
# fails under nested TCG, so tell it, as outer-qemu/boot.sh tells the outer one.
linux_append() {
	mhz=$(awk -F: '/^cpu MHz/ { printf "%d", $2; exit }' /proc/cpuinfo)
	echo "console=ttyS0 loglevel=4 panic=-1 printk.devkmsg=on tsc=reliable${mhz:+ tsc_early_khz=$((mhz * 1000))} $*"
}
# The guest's own lines (INNER-...) are kernel log records (guest-linux/
# init's say): whole on the console, after the VMM's stamp and the printk
# time ("[t_ns=N] [    6.041299] INNER-SIGBUS ..."). A pattern for one reads
# from a record's start, so that a line another one was printed into (the
# old writer's "INNER-SIGBUS tag[    6.04] Memory failure: ...") can never
# be read for one: REC, that start as a basic regex (grep, sed: its two
# groups come first), REC_E as an extended one (grep -E, awk).
REC='^\(\[t_ns=[0-9]*\] \)\{0,1\}\(\[ *[0-9]*\.[0-9]*\] \)\{0,1\}'
REC_E='^(\[t_ns=[0-9]+\] )?(\[ *[0-9]+\.[0-9]+\] )?'
# (exported: a check's sh -c reads them too)
export REC REC_E
# wait_console CONSOLE PATTERN [N] : until N (default 1) console lines match
# the grep pattern (one that starts with INNER- from a record's start: REC);
# bounded by the VMM's life and 300 s times the time
# factor, not a delay (a two-vCPU Linux guest took 97 s and 157 s to boot
# beside a CPU hog on each host core, where an idle machine takes 9 s:
# nested, under TCG)
wait_console() {
	wc_con=$1 wc_pat=$2 wc_want=${3:-1} wc_n=0
	case "$wc_pat" in INNER-*) wc_pat=$REC$wc_pat ;; esac
	while [ "$(grep -c -- "$wc_pat" "$wc_con")" -lt "$wc_want" ] &&
		kill -0 "$vmm_pid" 2>/dev/null && [ $wc_n -lt $((3000 * HWLAB_TIME_FACTOR)) ]; do
		sleep 0.1
		wc_n=$((wc_n + 1))
	done
	[ "$(grep -c -- "$wc_pat" "$wc_con")" -ge "$wc_want" ]
}
# start_linux LOG CONSOLE "GUEST ARGS" VMM_ARGS... : boot the Linux guest in
# the background (sets vmm_pid) and wait for its target's INNER-READY
start_linux() {
	sl_log=$1 sl_con=$2 sl_app=$3
	shift 3
	: >"$sl_con"
	timeout -s KILL "$(bound "${VMM_TIMEOUT:-420}")" "${VMM:-hwlab-vmm}" --kernel "$LINUX_KERNEL" \
		--initrd "$LINUX_INITRD" --console "$sl_con" --console-stamp \
		--append "$(linux_append "$sl_app")" "$@" >"$sl_log" 2>"$sl_log.err" &
	vmm_pid=$!
	wait_console "$sl_con" 'INNER-READY tag=target'
	echo "  start_linux: pid $vmm_pid, guest ready: $(grep -c . "$sl_con") console lines"
}
# page_field CONSOLE IDX FIELD : FIELD (va, pfn, gpa) of the newest target's page IDX
page_field() {
	sed -n "s/${REC}INNER-PAGE tag=target pid=[0-9]* idx=$2 .*$3=\(0x[0-9a-f]*\).*/\3/p" "$1" |
		tail -n 1
}
# recovered_in CONSOLE BASE_PFN : how many pages of the 2 MiB at BASE_PFN
# the guest's memory_failure() recovered (distinct pfns)
recovered_in() {
	ri_n=0
	for ri_pfn in $(sed -n 's/.*Memory failure: \(0x[0-9a-f]*\): recovery action for .*: Recovered.*/\1/p' "$1" | sort -u); do
		[ $((ri_pfn)) -ge $(($2)) ] && [ $((ri_pfn)) -lt $(($2 + 512)) ] && ri_n=$((ri_n + 1))
	done
	echo $ri_n
}
# wait_recovered CONSOLE BASE_PFN : until all 512 are, the guest panics or the
# VMM ends; bounded at 240 s times the time factor (each page is a
# memory_failure() and a console line under nested TCG)
wait_recovered() {
	wr_n=0
	while [ "$(recovered_in "$1" "$2")" -lt 512 ] && ! grep -q 'Kernel panic' "$1" &&
		kill -0 "$vmm_pid" 2>/dev/null && [ $wr_n -lt $((480 * HWLAB_TIME_FACTOR)) ]; do
		sleep 0.5
		wr_n=$((wr_n + 1))
	done
}

# spread_ms LOG : how long the spread took to tell every page, or "none"
spread_ms() {
	# (--live: the VMM may still be writing its log)
	sm_ns=$(json-field --live "$1" duration_ns event=poison_spread status=done | head -n 1)
	[ -n "$sm_ns" ] && echo $((sm_ns / 1000000)) || echo none
}
# stamp_of LINE : the t_ns= the VMM put before a console line
stamp_of() { sed -n 's/^\[t_ns=\([0-9]*\)\].*/\1/p'; }
# guest_ms CONSOLE T0 ERE [WINDOW] : ms from T0 to the first record arriving
# at or after T0 whose text (after its printk time) matches ERE, at the
# time the GUEST printed it: its printk time ("[ sss.uuuuuu]",
# printk.time=1) plus the offset of the guest's clock to the outer
# CLOCK_MONOTONIC. That offset is the smallest (arrival - printk time) over
# the records arriving within WINDOW s (default 30) of T0: no line arrives
# before it is printed, so the smallest difference is the closest bound (a
# line that found the UART idle); the window keeps the two clocks' drift
# out. WINDOW 0: only the records arriving from T0 to the matched one itself
# (on a loaded machine the guest's clock drifted 2-3 % from the outer one:
# 30 s of window put sid's Recovered 772 ms before the write). "-" without
# such records. Only whole records count: the guest's own lines are records
# too (INNER-..., see REC), so no kernel message lands inside another line.
guest_ms() {
	awk -v t0="$2" -v re="$3" -v win="${4:-30}" '
	# nsec S : a "sss.uuuuuu" printk time in ns
	function nsec(s,   pp, us) {
		split(s, pp, "."); us = pp[2]; sub(/^0+/, "", us)
		return pp[1] * 1000000000 + (us == "" ? 0 : us) * 1000
	}
	!/^\[t_ns=[0-9]+\] \[ *[0-9]+\.[0-9]+\] / { next }
	{
		a = $0; sub(/^\[t_ns=/, "", a)
		arr = a; sub(/\].*/, "", arr); arr += 0
		p = a; sub(/^[0-9]+\] \[ */, "", p); sub(/\].*/, "", p)
		text = a; sub(/^[0-9]+\] \[ *[0-9]+\.[0-9]+\] /, "", text)
		# (busybox awk reads a number with a leading 0 as octal: nsec)
		pns = nsec(p)
		if (win > 0) inwin = arr >= t0 - win * 1000000000 && arr <= t0 + win * 1000000000
		else inwin = arr >= t0 && !found
		if (inwin) {
			d = arr - pns
			if (!have || d < off) { off = d; have = 1 }
		}
		if (!found && arr >= t0 && text ~ re) { found = 1; fp = pns }
	}
	END { if (found && have) printf "%d\n", (fp + off - t0) / 1000000; else print "-" }' "$1"
}
# show_console CONSOLE : what the guest said about itself and its memory
show_console() {
	grep -E 'INNER-|Memory failure|mce:|Machine check|panic|BUG|WARNING|Oops' "$1" |
		sed 's/^/  con: /'
}
# as_reason : console lines as a reason for a measurement line: the VMM's
# stamp and the printk time dropped, "Kernel panic - not syncing: " as
# "panic: " (outer-qemu/boot.sh takes a "Kernel panic" line outside the
# "  con: " lines for the outer kernel's own)
as_reason() { sed 's/^\[t_ns=[0-9]*\] //; s/^\[ *[0-9.]*\] //; s/^Kernel panic - not syncing: /panic: /'; }
