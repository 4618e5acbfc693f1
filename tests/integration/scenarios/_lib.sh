# Helpers sourced by the scenario scripts inside the outer VM. Assertions
# (check, expect, skip, finish) come from the project's one check library,
# which mkinitramfs.sh packs as /hwlab/lib/check.sh; the host-side runner
# counts the "HWLAB-CHECK PASS|FAIL|SKIP" lines they print.
. /hwlab/lib/check.sh

GUEST=/hwlab/data/guest.elf

# The outer kernel's time factor (outer-qemu/init: hwlab.time_factor=, 1
# unless a debug kernel runs, make test-debug-kernel): every bound below and
# in the scenarios is that many times longer. Bounds, not delays: each wait
# still ends as soon as its state is there.
case ${HWLAB_TIME_FACTOR:=1} in
'' | *[!0-9]* | 0*)
	echo "HWLAB-ERROR hwlab.time_factor must be a whole number from 1, not '$HWLAB_TIME_FACTOR'"
	exit 2
	;;
esac
# bound N : N (seconds, or polls) times the time factor
bound() { echo $(($1 * HWLAB_TIME_FACTOR)); }

# matching FILE FRAGMENT... : the report lines holding every fragment
matching() {
	out=$(cat "$1")
	shift
	for frag in "$@"; do
		out=$(printf '%s\n' "$out" | grep -F -- "$frag")
	done
	printf '%s\n' "$out" | grep .
}
# json_line FILE FRAGMENT... : the first of them (fails if none)
json_line() { matching "$@" | head -n 1 | grep .; }
# count_lines FILE FRAGMENT... : how many
count_lines() { matching "$@" | grep -c .; }
# expect_count NAME N FILE FRAGMENT...
expect_count() {
	name=$1 want=$2 f=$3
	shift 3
	got=$(count_lines "$f" "$@")
	check "$name" "$want line(s) with $* (got $got)" test "$got" -eq "$want"
}
# (VMM, when set, is the binary: the asan scenario runs the ASan build)
# timed_vmm ARGS... : the VMM, killed if it outlives VMM_TIMEOUT (default
# 120 s) times the time factor, so that a hung VMM fails its check instead
# of hanging the boot; for expect, e.g. "expect NAME 1 'message' timed_vmm bad.elf"
timed_vmm() { timeout -s KILL "$(bound "${VMM_TIMEOUT:-120}")" "${VMM:-hwlab-vmm}" "$@"; }
# run_vmm LOG ARGS... : run the VMM, keep its report in LOG, echo it to the console
run_vmm() {
	log=$1
	shift
	timed_vmm "$@" >"$log" 2>"$log.err"
	vmm_rc=$?
	sed 's/^/  vmm: /' "$log"
	sed 's/^/  vmm(stderr): /' "$log.err"
	return $vmm_rc
}
# memmap_of PID: where the VMM with that pid publishes its memslot table (as root)
memmap_of() { echo "/run/hwlab-vmm/$1.memmap"; }
hardware_corrupted_kb() { sed -n 's/^HardwareCorrupted: *\([0-9]*\) kB/\1/p' /proc/meminfo; }
# start_vmm LOG ARGS... : run the VMM in the background (sets vmm_pid) and
# wait until it has published its memslot table and the guest has finished
# its first pass: only then has it touched (faulted in) every page of its
# working set, so a tool that poisons one finds it present. Waiting for the
# guest's first log line instead raced with the guest on a busy machine
# ("GPA ... is not present"). Not through timed_vmm: busybox timeout execs
# the VMM in its own process, so $! is the VMM's pid (the memslot table's
# name, hwpoison-guest's target); a shell function in the background would
# be a subshell with another pid.
start_vmm() {
	log=$1
	shift
	timeout -s KILL "$(bound "${VMM_TIMEOUT:-120}")" "${VMM:-hwlab-vmm}" "$@" >"$log" 2>"$log.err" &
	vmm_pid=$!
	n=0
	# bounded by the VMM's own timeout: a dead VMM ends the wait at once
	while ! { [ -f "$(memmap_of $vmm_pid)" ] && grep -q '"event":"guest_pass"' "$log"; } &&
		kill -0 "$vmm_pid" 2>/dev/null; do
		sleep 0.1
		n=$((n + 1))
	done
	echo "  start_vmm: pid $vmm_pid ready after $n polls"
}
# stop_vmm LOG : SIGTERM, wait, echo the report (sets vmm_rc)
stop_vmm() {
	kill -TERM "$vmm_pid" 2>/dev/null
	wait "$vmm_pid"
	vmm_rc=$?
	sed 's/^/  vmm: /' "$1"
	sed 's/^/  vmm(stderr): /' "$1.err"
}
# wait_for LOG FRAGMENT... : until a report line holds every fragment; at most
# 120 s times the time factor (a bound for a lost event, not a delay: it
# returns on the line)
wait_for() {
	f=$1
	shift
	n=0
	while ! json_line "$f" "$@" >/dev/null && [ $n -lt $((1200 * HWLAB_TIME_FACTOR)) ]; do
		sleep 0.1
		n=$((n + 1))
	done
}

# --- the Linux guest (guest-linux/): the project's bzImage booted by hwlab-vmm
LINUX_KERNEL=/hwlab/data/bzImage
LINUX_INITRD=/hwlab/data/inner-initramfs.cpio.gz
# The guest's TSC runs at the outer VM's rate; calibrating it on the PIT
# fails under nested TCG, so tell it, as outer-qemu/boot.sh tells the outer one.
linux_append() {
	mhz=$(awk -F: '/^cpu MHz/ { printf "%d", $2; exit }' /proc/cpuinfo)
	echo "console=ttyS0 loglevel=4 panic=-1 printk.devkmsg=on tsc=reliable${mhz:+ tsc_early_khz=$((mhz * 1000))} $*"
}
# wait_console CONSOLE PATTERN [N] : until N (default 1) console lines match
# the grep pattern; bounded by the VMM's life and 300 s times the time
# factor, not a delay (a two-vCPU Linux guest took 97 s and 157 s to boot
# beside a CPU hog on each host core, where an idle machine takes 9 s:
# nested, under TCG)
wait_console() {
	wc_con=$1 wc_pat=$2 wc_want=${3:-1} wc_n=0
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
	sed -n "s/.*INNER-PAGE tag=target pid=[0-9]* idx=$2 .*$3=\(0x[0-9a-f]*\).*/\1/p" "$1" |
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
	sm_ns=$(json_line "$1" '"event":"poison_spread"' '"status":"done"' |
		sed -n 's/.*"duration_ns":\([0-9]*\).*/\1/p')
	[ -n "$sm_ns" ] && echo $((sm_ns / 1000000)) || echo none
}
# stamp_of LINE : the t_ns= the VMM put before a console line
stamp_of() { sed -n 's/^\[t_ns=\([0-9]*\)\].*/\1/p'; }
# guest_ms CONSOLE T0 ERE [WINDOW] : ms from T0 to the first line arriving at
# or after T0 that matches ERE, at the time the GUEST printed it: its printk
# time ("[ sss.uuuuuu]", printk.time=1) plus the offset of the guest's
# clock to the outer CLOCK_MONOTONIC. That offset is the smallest
# (arrival - printk time) over the printk lines arriving within WINDOW s
# (default 30) of T0: no line arrives before it is printed, so the smallest
# difference is the closest bound (a line that found the UART idle); the
# window keeps the two clocks' drift out. WINDOW 0: only the lines arriving
# from T0 to the matched line itself (on a loaded machine the guest's clock
# drifted 2-3 % from the outer one: 30 s of window put sid's Recovered 772
# ms before the write), or, when none arrived in between, the first printk
# line after it. "-" without such lines.
guest_ms() {
	awk -v t0="$2" -v re="$3" -v win="${4:-30}" '
	# nsec S : a "sss.uuuuuu" printk time in ns
	function nsec(s,   pp, us) {
		split(s, pp, "."); us = pp[2]; sub(/^0+/, "", us)
		return pp[1] * 1000000000 + (us == "" ? 0 : us) * 1000
	}
	{
		# a kernel message that landed in the middle of a line userspace
		# was writing ("INNER-SIGBUS ...[ 9.345029] Memory failure: ...")
		# keeps its own time: the last "[ s.us]" before the match
		if (!found && $0 !~ /^\[t_ns=[0-9]+\] \[ *[0-9]+\.[0-9]+\] / && $0 ~ re &&
		    match($0, /^\[t_ns=[0-9]+\]/)) {
			arr = substr($0, 7, RLENGTH - 7) + 0
			if (match($0, re)) {
				head = substr($0, 1, RSTART - 1)
				if (arr >= t0 && match(head, /\[ *[0-9]+\.[0-9]+\](\[ *[A-Z]?[0-9]+\])? *$/)) {
					p = substr(head, RSTART + 1); sub(/\].*/, "", p); sub(/^ */, "", p)
					found = 1; fp = nsec(p)
				}
			}
		}
		if ($0 !~ /^\[t_ns=[0-9]+\] \[ *[0-9]+\.[0-9]+\] /) next
		a = $0; sub(/^\[t_ns=/, "", a)
		arr = a; sub(/\].*/, "", arr); arr += 0
		p = a; sub(/^[0-9]+\] \[ */, "", p); sub(/\].*/, "", p)
		# (busybox awk reads a number with a leading 0 as octal: nsec)
		pns = nsec(p)
		if (win > 0) inwin = arr >= t0 - win * 1000000000 && arr <= t0 + win * 1000000000
		# (and, when the match itself came inside another line, the next
		# printk line after it: the one sample there is)
		else inwin = arr >= t0 && (!found || !have)
		if (inwin) {
			d = arr - pns
			if (!have || d < off) { off = d; have = 1 }
		}
		if (!found && arr >= t0 && $0 ~ re) { found = 1; fp = pns }
	}
	END { if (found && have) printf "%d\n", (fp + off - t0) / 1000000; else print "-" }' "$1"
}
# show_console CONSOLE : what the guest said about itself and its memory
show_console() {
	grep -E 'INNER-|Memory failure|mce:|Machine check|panic|BUG|WARNING|Oops' "$1" |
		sed 's/^/  con: /'
}

# --- the newer QEMUs (compare image): /hwlab/peers/SUITE/ is a chroot of
# that Debian suite's QEMU and libvirt (outer-qemu/mkinitramfs.sh, PEERS),
# with /hwlab/peers/SUITE/versions ("qemu-system-x86=V", "libvirt0=V"), or
# only /hwlab/peers/SUITE/unavailable (why the image has no such peer).
PEERS=/hwlab/peers
# peer_ready SUITE : the suite's chroot is there and has what QEMU and the
# tools in it use from the outer VM bind-mounted (once a boot): /dev (with
# /dev/kvm), the hugetlbfs at /dev/hugepages (mounted here first if it is
# not yet, so that the chroot sees the same one), /proc (the tools read
# /proc/PID/pagemap and exe), /sys with debugfs (the injectors), /tmp (the
# consoles' pipes, libvirt's embedded root) and /hwlab/data (the guests).
# Else false, with the reason in peer_reason (for skip).
peer_ready() {
	pr_root=$PEERS/$1
	peer_reason=
	if [ -f "$pr_root/unavailable" ]; then
		peer_reason="no QEMU of Debian $1 in this image: $(cat "$pr_root/unavailable")"
		return 1
	fi
	if [ ! -x "$pr_root/usr/bin/qemu-system-x86_64" ]; then
		peer_reason="no QEMU of Debian $1 in this image (the compare image carries $PEERS)"
		return 1
	fi
	[ -f "$pr_root/.mounted" ] && return 0
	# (the outer VM's busybox has no mountpoint applet)
	if ! grep -q ' /dev/hugepages hugetlbfs ' /proc/mounts; then
		mkdir -p /dev/hugepages && mount -t hugetlbfs hugetlbfs /dev/hugepages
	fi
	for pr_d in /dev /dev/hugepages /proc /sys /tmp /hwlab/data; do
		mkdir -p "$pr_root$pr_d"
		if ! mount -o bind "$pr_d" "$pr_root$pr_d"; then
			peer_reason="cannot bind-mount $pr_d into $pr_root"
			return 1
		fi
	done
	mount -t debugfs debugfs "$pr_root/sys/kernel/debug"
	: >"$pr_root/.mounted"
}
# peer_run SUITE COMMAND... : COMMAND in the suite's chroot (exec'd: its
# pid is the command's, as the tools that check /proc/PID/exe need)
peer_run() {
	peer_ready "$1" || { echo "peer_run: $peer_reason" >&2; return 127; }
	pr_suite=$1
	shift
	exec_in=$PEERS/$pr_suite
	chroot "$exec_in" "$@"
}
# peer_qemu SUITE ARGS... : the suite's qemu-system-x86_64 with ARGS (paths
# as the outer VM names them under /dev, /tmp and /hwlab/data), e.g. in the
# background: peer_qemu sid -accel kvm -cpu host ... & qemu_pid=$! (a
# function in the background is a subshell: its pid is not QEMU's; for
# that, "chroot $PEERS/sid /usr/bin/qemu-system-x86_64 ..." after peer_ready)
peer_qemu() {
	pq_suite=$1
	shift
	peer_run "$pq_suite" /usr/bin/qemu-system-x86_64 "$@"
}
# peer_version SUITE PKG : the package's version in the suite's chroot
peer_version() { sed -n "s/^$2=//p" "$PEERS/$1/versions" 2>/dev/null; }

# --- rasdaemon in the Linux guest (guest-linux/init, hwlab_inner.ras=1) -----
# report_value LINE KEY : KEY's value in one of the VMM's report lines
# ("mci_status":"0x..." or "bank":9), quotes dropped
report_value() {
	printf '%s\n' "$1" | sed -n "s/.*\"$2\":\"\{0,1\}\([^\",}]*\).*/\1/p"
}
# ras_unavailable CONSOLE : init's reason when the guest has no rasdaemon (an
# image built without it: the suite lacks the package; a kernel without the
# tracepoints), else nothing
ras_unavailable() { sed -n 's/.*INNER-RAS unavailable reason=//p' "$1" | head -n 1; }
# ras_wait CONSOLE [N] : before the VMM is stopped, until rasdaemon's N (1)
# mce and N memory_failure rows are on the console, when it runs at all
# (bounded as wait_console)
ras_wait() {
	grep -q 'INNER-RAS ready' "$1" || return 0
	wait_console "$1" 'INNER-RAS mce ' "${2:-1}"
	wait_console "$1" 'INNER-RAS memory_failure ' "${2:-1}"
}
# ras_check NAME KIND CONSOLE GPA [LOG] : the guest's rasdaemon (booted with
# hwlab_inner.ras=1) recorded the machine check hwlab-vmm injected for the
# guest page at GPA as a real one: NAME-ras-ready, it listened with
# mce:mce_record and ras:memory_failure_event enabled; NAME-ras-mce, its
# database (rows as init printed them) holds exactly one mce_record with the
# injected bank, MCi_STATUS and MCi_ADDR = GPA; NAME-ras-memory-failure,
# exactly one memory_failure_event for GPA's pfn, result Recovered, with the
# page type the inner kernel named in its own "recovery action for TYPE:
# Recovered" line. KIND late (an AR) or early (an AMD deferred AO): the
# bank and status are the VMM's own report's (its inject line for GPA in
# LOG), else AMD's as hwlab-vmm and QEMU inject them (AR: bank 9,
# 0xbc00080000000000; AO: bank 8, 0x9c00180000000000). SKIPs with init's
# reason when the guest has no rasdaemon.
ras_check() {
	rc_name=$1 rc_con=$3 rc_gpa=$4 rc_log=${5:-}
	case $2 in
	late) rc_code=BUS_MCEERR_AR rc_bank=9 rc_status=0xbc00080000000000 ;;
	early) rc_code=BUS_MCEERR_AO rc_bank=8 rc_status=0x9c00180000000000 ;;
	*) fail "$rc_name-ras" "ras_check: KIND is late or early, not '$2'"; return ;;
	esac
	if [ -n "$rc_log" ]; then
		rc_inj=$(json_line "$rc_log" "\"si_code\":\"$rc_code\"" "\"gpa\":\"$rc_gpa\"" '"action":"inject"')
		rc_bank=$(report_value "$rc_inj" bank)
		rc_status=$(report_value "$rc_inj" mci_status)
	fi
	rc_pfn=$(printf '%#x' $((rc_gpa >> 12)))
	rc_why=$(ras_unavailable "$rc_con")
	if [ -n "$rc_why" ]; then
		skip "$rc_name-ras-ready" "$rc_why"
		skip "$rc_name-ras-mce" "$rc_why"
		skip "$rc_name-ras-memory-failure" "$rc_why"
		return
	fi
	rc_line=$(grep -m 1 'INNER-RAS ready' "$rc_con")
	[ -z "$rc_line" ] || echo "  ${rc_line#*INNER-RAS }"
	check "$rc_name-ras-ready" "rasdaemon recording, mce:mce_record and ras:memory_failure_event enabled" \
		sh -c 'case "$1" in *events=*mce:mce_record*) ;; *) exit 1 ;; esac
		       case "$1" in *events=*ras:memory_failure_event*) ;; *) exit 1 ;; esac' - "$rc_line"
	rc_n=$(grep -c "INNER-RAS mce id=[0-9]* bank=$rc_bank status=$rc_status addr=$rc_gpa " "$rc_con")
	check "$rc_name-ras-mce" \
		"rasdaemon's mce_record: one row bank ${rc_bank:-?} status ${rc_status:-?} addr $rc_gpa (got $rc_n)" \
		test -n "$rc_bank" -a -n "$rc_status" -a "$rc_n" -eq 1
	rc_type=$(sed -n "s/.*Memory failure: $rc_pfn: recovery action for \(.*\): Recovered.*/\1/p" \
		"$rc_con" | head -n 1)
	rc_n=$(grep -c "INNER-RAS memory_failure id=[0-9]* pfn=$rc_pfn type=\"${rc_type:-?}\" result=Recovered " \
		"$rc_con")
	check "$rc_name-ras-memory-failure" \
		"rasdaemon's memory_failure_event: one row pfn $rc_pfn type '$rc_type' (the inner kernel's) Recovered (got $rc_n)" \
		test -n "$rc_type" -a "$rc_n" -eq 1
}
