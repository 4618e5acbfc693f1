# Helpers sourced by the scenario scripts inside the outer VM: bounds, the
# VMM's report lines and running the VMM; by concern, the Linux guest
# (_linux.sh), the newer QEMUs' chroots (_peers.sh) and the guest's
# rasdaemon (_ras.sh), sourced at the end. A file here whose name starts
# with _ is a helper, not a scenario (tests/lib/scenario_table.sh;
# mkinitramfs.sh copies them all to /hwlab/scenarios/). Assertions (check,
# expect, skip, finish) come from the project's one check library, which
# mkinitramfs.sh packs as /hwlab/lib/check.sh; the host-side runner counts
# the "HWLAB-CHECK PASS|FAIL|SKIP" lines they print.
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

# The host kernel this VM runs (outer-qemu/boot.sh's HWLAB_HOST: 6.1, 6.12,
# 7.2 ours, bookworm, trixie, sid Debian's stock) and what it can do
# (kernel/features, from its version and its series; outer-qemu/init reads
# both from the command line).
# host_has FEATURE : the host kernel has FEATURE
host_has() { case ",${HWLAB_HOST_FEATURES:-}," in *",$1,"*) return 0 ;; esac; return 1; }
# need_host FEATURE NAME WHAT : true if the host has FEATURE; else one SKIP
# for check NAME, saying what it would have shown and what the host lacks
need_host() {
	host_has "$1" && return 0
	skip "$2" "$3: host ${HWLAB_HOST:-?} ($(uname -r)) lacks $1 ($(feature_origin "$1"))"
	return 1
}
# feature_origin FEATURE : where a kernel gets it, from kernel/features
# (packed as /hwlab/lib/features)
feature_origin() {
	awk -v f="$1" '$1 == f { found = 1
		if ($2 == "-") print "a patch of ours, kernel/features"; else print "upstream since v" $2 }
		END { if (!found) print "not in kernel/features" }' /hwlab/lib/features 2>/dev/null
}

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
# line_has LINE PATTERN : LINE holds PATTERN (grep), matched as data: a report
# line or a guest's console line spliced into an sh -c string could break or
# inject into the check's command with a quote of its own
line_has() { printf '%s' "$1" | grep -q -- "$2"; }
# report_value LINE KEY : KEY's value in one of the VMM's report lines
# (json-field's: a string without its quotes, "mci_status":"0x..." as 0x...;
# a number, true or null as written; an object or array as compact JSON)
report_value() { printf '%s\n' "$1" | json-field - "$2"; }
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
# poison_guest PID GPA : hwpoison-guest poisons the guest page at GPA of the
# VMM PID (debugfs corrupt-pfn); sets out, its output (its errors too), and
# t0, the t_ns of its poison line: when it wrote corrupt-pfn (none: no
# poison, and its words on the console)
poison_guest() {
	out=$(hwpoison-guest "$1" "$2" 2>&1)
	t0=$(printf '%s\n' "$out" | json-field - t_ns event=poison)
	[ -n "$t0" ] || echo "  poison_guest: $out"
}
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

# --- by concern
. /hwlab/scenarios/_linux.sh
. /hwlab/scenarios/_peers.sh
. /hwlab/scenarios/_ras.sh
