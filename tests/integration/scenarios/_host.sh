# Helpers of the host-behaviour scenarios (host_*.sh, docs/host-behaviour.md):
# each sets up one way the host kernel treats a VMM's poisoned memory, poisons
# it with the debugfs injector, and checks the signal the kernel sends and
# what hwlab-vmm and its guest make of it, expected per host from host_has.
# Sourced after _lib.sh.

# kmsg_mark NAME : a line in the kernel log that kernel_since NAME reads from
kmsg_mark() { echo "hwlab-host-case $1" >/dev/kmsg; }
# kernel_since NAME : the kernel log after kmsg_mark NAME (awk reads it all:
# no early-stopping reader under pipefail)
kernel_since() { dmesg | awk -v m="hwlab-host-case $1" 'seen; index($0, m) { seen = 1 }'; }
# mf_result NAME PFN : memory_failure()'s verdict on PFN since the mark, as
# "PAGE_TYPE:RESULT" with blanks as _ ("unsplit_thp:Ignored"), or none
mf_result() {
	kernel_since "$1" | sed -n "s/.*Memory failure: $2: recovery action for \(.*\): \([A-Za-z]*\)$/\1:\2/p" |
		tail -n 1 | tr ' ' _ | grep . || echo none
}

# page_flags PID HVA : "PFN FLAGS" of the page there (pagemap-pfn --flags)
page_flags() { pagemap-pfn --flags "$1" "$2" 2>&1; }
# kpf FLAGS BIT : 1 if that /proc/kpageflags bit is set (KPF_KSM 21, KPF_THP 22,
# KPF_HWPOISON 19)
kpf() { echo $((($1 >> $2) & 1)); }

# inject_pfn PFN : write PFN to debugfs corrupt-pfn (memory_failure() with
# MF_SW_SIMULATED, as hwpoison-guest does, for pages the tool rightly
# refuses: KSM); sets inject_rc and inject_err, the kernel's answer ("ok",
# or the errno's text)
inject_pfn() {
	inject_err=$( { echo "$1" >/sys/kernel/debug/hwpoison/corrupt-pfn; } 2>&1)
	inject_rc=$?
	[ $inject_rc -eq 0 ] && inject_err=ok
	inject_err=$(printf '%s' "$inject_err" | sed 's/.*write error: //; s/.*: //' | tr ' ' _)
}
# injector_answer TEXT : the kernel's answer in a failed write's message
# (hwpoison-guest's "writing '0x..' to hwpoison/corrupt-pfn: Device or
# resource busy"), blanks as _
injector_answer() { printf '%s\n' "$1" | sed -n 's/.*to hwpoison\/corrupt-pfn: //p' | tail -n 1 | tr ' ' _; }

# last_pass LOG : the number of the last guest_pass line (0 before the first)
last_pass() { json-field --live "$1" pass event=guest_pass 2>/dev/null | tail -n 1 | grep . || echo 0; }
# wait_pass LOG N : until the guest reported pass N (it rewrote and checked
# every page of its working set once more), the VMM dies, or 300 s times the
# time factor go by (a bound, not a delay)
wait_pass() {
	wp_n=0
	while [ "$(last_pass "$1")" -lt "$2" ] && kill -0 "$vmm_pid" 2>/dev/null &&
		[ $wp_n -lt $((3000 * HWLAB_TIME_FACTOR)) ]; do
		sleep 0.1
		wp_n=$((wp_n + 1))
	done
}

# guest_runs_on CASE : CASE.log's guest makes two more passes over its memory (a
# count, not a time), then SIGTERM stops its VMM: one check that the VMM
# stopped cleanly and the guest's checksums held; hc1 is HardwareCorrupted
# after the stop (errors: the last pass's count, for the caller's row)
guest_runs_on() {
	wait_pass "$1.log" $(($(last_pass "$1.log") + 2))
	stop_vmm "$1.log"
	hc1=$(hardware_corrupted_kb)
	errors=$(json-field "$1.log" errors event=guest_pass | tail -n 1)
	check "$1-runs-on" "VMM stopped by SIGTERM (rc $vmm_rc), its guest's checksums intact (${errors:-no pass} errors)" \
		test "$vmm_rc" -eq 0 -a "${errors:-1}" -eq 0
}

# behaviour ROW KEY=VALUE... : one measured row of docs/host-behaviour.md
behaviour() {
	row=$1
	shift
	echo "HWLAB-MEASURE host-behaviour row=$row host=${HWLAB_HOST:-?} kernel=$(uname -r) $*"
}
