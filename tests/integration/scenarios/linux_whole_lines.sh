# The Linux guest's report lines arrive whole while its kernel prints without
# pause from the other vCPU. Two vCPUs: the target pinned to CPU 1, a loop on
# CPU 0 writing /proc/sys/vm/drop_caches (a KERN_INFO line each time, on
# the console: init raises its loglevel to 7), and 20 late kills (AR), each a
# memory_failure() and its lines on the target's CPU beside the target's
# SIGBUS and replaced-page lines. Each INNER line is one kernel log record
# (guest-linux/init's say, poison_target's emit): every line that holds
# "INNER-" must be one record, from its start to its end, of a known kind,
# and no line may carry a printk time in its middle (a kernel message
# printed into another line). One boot takes the 20 events: the target
# recovers from each SIGBUS (a fresh page), as linux_latency's does.
# hwlab.whole_lines_log=console (an outer kernel argument, HWLAB_APPEND)
# boots the guest with the old writer (hwlab_inner.log=console: each line
# written to the console directly), to show that these checks catch a cut.
. /hwlab/scenarios/_lib.sh
events=20
guest_log=kmsg
for arg in $(cat /proc/cmdline); do
	case "$arg" in hwlab.whole_lines_log=*) guest_log=${arg#*=} ;; esac
done
# one boot for every event, its console busy with the flood
VMM_TIMEOUT=720
echo 0 >/proc/sys/vm/memory_failure_early_kill

app="hwlab_inner.log=$guest_log hwlab_inner.printk_flood=0 hwlab_inner.cpu=1"
start_linux wl.log wl.con "$app hwlab_inner.pages=$events hwlab_inner.on_sigbus=recover" --vcpus 2
# the flood runs before the first event: its lines reach the console
flood_pat='drop_caches: 2$'
wait_console wl.con "$flood_pat" 20
flood_then=$(grep -c -- "$flood_pat" wl.con)
t_flood=$(grep -m1 "${REC}INNER-PRINTK-FLOOD" wl.con | stamp_of)
t_flood20=$(grep -- "$flood_pat" wl.con | sed -n 20p | stamp_of)
echo "  flood: its first 20 lines in $(((t_flood20 - t_flood) / 1000000)) ms"
grep -m 3 -E "INNER-(LOG|BOOT|PRINTK-FLOOD|PIN)" wl.con | sed 's/^/  con: /'

i=0
t_first=$(date +%s)
# the console lines each event's window began and ended at
: >wl.windows
while [ $i -lt $events ]; do
	w_start=$(grep -c . wl.con)
	gpa=$(page_field wl.con $i gpa)
	if ! out=$(hwpoison-guest $vmm_pid "$gpa"); then
		echo "  event $i ($gpa): $out"
		break
	fi
	# the event's end: the kernel's line, then the target's two (its
	# SIGBUS, its replaced page). Waited for loosely, not as whole records:
	# the old writer's cut lines must not stall the run; the checks below
	# read whole records only.
	wait_console wl.con "Memory failure: $(printf '%#x' $((gpa >> 12))): recovery action"
	i=$((i + 1))
	wait_console wl.con 'SIGBUS tag=target' $i
	wait_console wl.con 'PAGE tag=target' $((events + i))
	# and the flood still printing: a line of it after the event's start
	# (no more: the console, ~1-2 lines a second here, is the bottleneck,
	# and the flooding CPU prints every pending record with its own)
	wait_console wl.con "$flood_pat" $(($(sed -n "1,${w_start}p" wl.con | grep -c -- "$flood_pat") + 1))
	echo "$w_start $(grep -c . wl.con)" >>wl.windows
done
echo "  $i events in $(($(date +%s) - t_first)) s"
wait_console wl.con 'ALIVE survivor=yes'
stop_vmm wl.log >/dev/null
flood_n=$(($(grep -c -- "$flood_pat" wl.con) - flood_then))
# the kernel printed from CPU 0 through each event: a drop_caches line in
# its window (from the poison write to the target's replaced page and the
# next drop_caches line)
flooded=0
while read -r w_a w_b; do
	[ "$(sed -n "$((w_a + 1)),${w_b}p" wl.con | grep -c -- "$flood_pat")" -gt 0 ] &&
		flooded=$((flooded + 1))
done <wl.windows
echo "  console: $(grep -c . wl.con) lines, $(grep -c -- "$flood_pat" wl.con) of them drop_caches ($flood_n during the events)"
check flood "the kernel printed from CPU 0 through every event: $flooded of $events event windows hold a drop_caches line" \
	test "$flooded" -eq $events

# every INNER line: the VMM's stamp, the printk time (a record; absent
# from the old writer's lines) and one whole line of a kind below
# (d: a number; x: a hex one; x0: %#llx prints a zero as 0)
d='[0-9]+' x='0x[0-9a-f]+' x0='(0x[0-9a-f]+|0)'
grammar="INNER-LOG via=(kmsg|console)( reason=\"[^\"]*\")?
INNER-BOOT kernel=[^ ]+ cpus=2 uptime=[0-9.]+
INNER-MCE check_interval=[0-9a-z]+ set=[0-9a-z]+ cpus=$d
INNER-PRINTK-FLOOD cpu=0 pid=$d
INNER-PIN pid=$d -c 1
INNER-PAGE tag=(target|survivor) pid=$d idx=$d va=$x pfn=$x gpa=$x
INNER-READY tag=(target|survivor) pid=$d pages=$d mode=late
INNER-SIGBUS tag=target pid=$d code=BUS_MCEERR_AR addr=$x lsb=12 idx=$d
INNER-ROUND tag=(target|survivor) pid=$d n=$d
INNER-ALIVE survivor=yes hardware_corrupted_kb=$d
INNER-MCELOG cpu=$d bank=$d mcgstatus=$x0 status=$x0 addr=$x0 misc=$x0 severity=$d"
whole="^\[t_ns=$d\] (\[ *$d\.$d\] )?($(printf '%s\n' "$grammar" | paste -sd'|'))\$"
inner_n=$(grep -c 'INNER-' wl.con)
grep 'INNER-' wl.con | grep -vE -- "$whole" >wl.broken
broken_n=$(grep -c . wl.broken)
sed 's/^/  broken: /' wl.broken | head -n 8
check inner-whole "each of the $inner_n lines with INNER- in them is one whole record of a known kind ($broken_n are not)" \
	test "$inner_n" -gt 0 -a "$broken_n" -eq 0
# a printk time after a line's start: a kernel message printed into it
grep -E "^\[t_ns=$d\] .+\[ *$d\.[0-9]{6}\]" wl.con >wl.midline
mid_n=$(grep -c . wl.midline)
sed 's/^/  midline: /' wl.midline | head -n 8
check no-midline-printk "no console line carries a printk time in its middle ($mid_n do)" \
	test "$mid_n" -eq 0
rec="^\[t_ns=$d\] (\[ *$d\.$d\] )?"
sig_n=$(grep -cE "${rec}INNER-SIGBUS tag=target pid=$d code=BUS_MCEERR_AR addr=$x lsb=12 idx=$d\$" wl.con)
sig_idx=$(grep -E "${rec}INNER-SIGBUS tag=target " wl.con | sed 's/.* idx=//' | sort -n | paste -sd' ')
check sigbus-each "one whole INNER-SIGBUS (AR) record per event, pages 0..$((events - 1)): $sig_n" \
	test "$sig_n" -eq $events -a "$sig_idx" = "$(seq 0 $((events - 1)) | paste -sd' ')"
# the target's pages at the start and each replaced one; the survivor's 4
check pages-each "every INNER-PAGE record is there: $((events * 2)) of the target, 4 of the survivor" \
	test "$(grep -cE "${rec}INNER-PAGE tag=target " wl.con)" -eq $((events * 2)) \
	-a "$(grep -cE "${rec}INNER-PAGE tag=survivor " wl.con)" -eq 4
check recovered "the inner kernel recovered all $events pages" \
	test "$(grep -c 'Memory failure: 0x[0-9a-f]*: recovery action for dirty LRU page: Recovered$' wl.con)" -eq $events
check no-dropped "the kernel dropped no log record on the way to the console" \
	sh -c '! grep -q "printk messages dropped" wl.con'
check no-panic "no oops or panic in the guest" sh -c '! grep -qE "Kernel panic|Oops|BUG:" wl.con'
finish
