# How long the Linux guest takes: its boot in hwlab-vmm (outer VM under TCG,
# the guest on nested KVM), and for N late-kill events (default 20) the time
# from hwpoison-guest's corrupt-pfn write to the VMM's injection, to the
# inner kernel's machine-check line and to its "Recovered" line. Every time
# is CLOCK_MONOTONIC of the outer VM: the tool's t_ns, the VMM's report
# t_ns, and the t_ns the VMM stamps on each console line as it leaves the
# guest. The target recovers from each SIGBUS (a fresh page), so one boot
# takes every event.
. /hwlab/scenarios/_lib.sh
events=${HWLAB_LINUX_EVENTS:-20}
# one boot for every event: more than the 180 s a VMM gets by default
VMM_TIMEOUT=540
for arg in $(cat /proc/cmdline); do
	case "$arg" in hwlab.linux_events=*) events=${arg#*=} ;; esac
done
echo 0 >/proc/sys/vm/memory_failure_early_kill

start_linux lat.log lat.con "hwlab_inner.pages=$events hwlab_inner.on_sigbus=recover"
# --live: the VMM is running, its last line may be half written
t_start=$(json-field --live lat.log t_ns event=vmm_start)
t_boot=$(grep -m1 "$REC"'INNER-BOOT' lat.con | stamp_of)
t_ready=$(grep -m1 "$REC"'INNER-READY tag=target' lat.con | stamp_of)
echo "HWLAB-MEASURE linux-boot to_init_ms=$(((t_boot - t_start) / 1000000))" \
	"to_ready_ms=$(((t_ready - t_start) / 1000000))"
check boot-measured "boot times measured" test -n "$t_boot" -a -n "$t_ready"

: >lat.samples
i=0
while [ $i -lt "$events" ]; do
	gpa=$(page_field lat.con $i gpa)
	pfn=$(printf '%#x' $((gpa >> 12)))
	out=$(hwpoison-guest $vmm_pid "$gpa") || { echo "  event $i: $out"; i=$((i + 1)); continue; }
	t0=$(echo "$out" | json-field - t_ns)
	wait_console lat.con "Memory failure: $pfn: recovery action"
	wait_console lat.con "INNER-SIGBUS tag=target .* idx=$i\$"
	wait_for lat.log '"event":"sigbus"' "\"gpa\":\"$gpa\"" '"action":"inject"'
	t_inj=$(json-field --live lat.log t_ns event=sigbus gpa="$gpa" action=inject | head -n 1)
	t_mce=$(grep "Uncorrected hardware memory error in user-access at ${gpa#0x}" lat.con |
		head -n 1 | stamp_of)
	t_rec=$(grep "Memory failure: $pfn: recovery action" lat.con | head -n 1 | stamp_of)
	t_sig=$(grep "${REC}INNER-SIGBUS tag=target .* idx=$i\$" lat.con | head -n 1 | stamp_of)
	if [ -n "$t0" ] && [ -n "$t_inj" ] && [ -n "$t_mce" ] && [ -n "$t_rec" ] && [ -n "$t_sig" ]; then
		echo "$(((t_inj - t0) / 1000)) $(((t_mce - t0) / 1000)) $(((t_rec - t0) / 1000)) $(((t_sig - t0) / 1000))" >>lat.samples
	else
		echo "  event $i ($gpa): missing a time: write=$t0 inject=$t_inj mce=$t_mce recovered=$t_rec sigbus=$t_sig"
	fi
	i=$((i + 1))
done
wait_console lat.con 'INNER-ALIVE survivor=yes'
stop_vmm lat.log >/dev/null
show_console lat.con | tail -n 12
n=$(grep -c . lat.samples)
check all-events "$n of $events events with every time measured" test "$n" -eq "$events"
expect_count all-injected "$events" lat.log '"event":"sigbus"' '"si_code":"BUS_MCEERR_AR"' '"action":"inject"'
check all-recovered "the inner kernel recovered every page" \
	test "$(grep -c 'recovery action for dirty LRU page: Recovered' lat.con)" -eq "$events"
check survivor "the other inner process lived through all of them" \
	sh -c '! grep -q "INNER-ALIVE survivor=no" lat.con'
# median and p99 (nearest rank) of column $1, in microseconds
stat() {
	sort -n -k "$1" lat.samples | awk -v c="$1" '{ v[NR] = $c } END {
		m = v[int((NR + 1) / 2)]; p = v[int(NR * 0.99 + 0.999)]
		printf "median_us=%d p99_us=%d max_us=%d", m, p, v[NR] }'
}
echo "HWLAB-MEASURE linux-latency events=$n write_to_inject $(stat 1)"
echo "HWLAB-MEASURE linux-latency events=$n write_to_guest_mce_line $(stat 2)"
echo "HWLAB-MEASURE linux-latency events=$n write_to_guest_recovered_line $(stat 3)"
echo "HWLAB-MEASURE linux-latency events=$n write_to_inner_sigbus $(stat 4)"
finish
