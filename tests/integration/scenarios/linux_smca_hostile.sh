# A hostile Scalable MCA guest (issue #24 item 5): Debian sid's stock 7.2
# kernel in hwlab-vmm --smca on, whose root misbehaves through
# /dev/cpu/0/msr (guest-linux/msr_poke, init's hwlab_inner.smca_hostile=;
# the kernel's msr module appended to its initramfs). Each case must leave
# the VMM running and say how the guest was told:
#  boot 1, two vCPUs, the target on vCPU 1, the AOs on vCPU 0 (the first
#  that runs), the guest's poll every 1 s:
#   bogus  the deferred-error LVT entry (EILVT 2, MSR 0x852) given vector
#          0x05, unmasked, fixed: the AO is told by the poll, told_why names
#          the vector, and the poll isolates the page
#   masked 0x100f4: poll, told_why "masked"; isolated by the poll
#   nmi    0x4f4, NMI delivery: poll, told_why "not fixed"; isolated
#   flood  the entry back to 0xf4; CPU 0 reads SMCA MC0_STATUS in a tight
#          loop (hwlab_inner.flood= times) while an AO comes: it is told by
#          interrupt, the target on vCPU 1 and init go on (INNER-ALIVE lines
#          during the flood), the smca line counts the flood's MSR exits,
#          and SIGTERM stops the VMM promptly while a second, endless flood
#          runs
#  boot 2, one vCPU: the guest never clears its banks (check_interval 0: no
#  poll; the LVT entry masked: no interrupt) and more pages are poisoned
#  than the deferred-error banks (31 of an SMCA guest's 32) and the vCPU's
#  queue (32) hold: the first 31 are injected (told poll, masked), the
#  queue holds 32 (bounded),
#  the rest are reported not delivered at once, the guest runs on, SIGTERM
#  stops the VMM promptly and each AO still waiting is reported then.
. /hwlab/scenarios/_lib.sh

VMM_TIMEOUT=600
stock=/hwlab/data/stock/sid
if ! [ -f "$stock/vmlinuz" ]; then
	skip hostile "no sid kernel: $(cat "$stock/unavailable" 2>/dev/null || echo "no $stock in this image")"
	finish
fi
if ! [ -f "$stock/modules.cpio.gz" ]; then
	skip hostile "no msr module for sid's kernel ($stock/modules.cpio.gz: scripts/stock-kernels.sh)"
	finish
fi
echo "  kernel: $(cat "$stock/version")"
LINUX_KERNEL=$stock/vmlinuz
# the stock initramfs and the kernel's own modules: the kernel unpacks
# concatenated archives one after the other
cat /hwlab/data/inner-initramfs-stock.cpio.gz "$stock/modules.cpio.gz" >hostile-initrd.cpio.gz
LINUX_INITRD=$PWD/hostile-initrd.cpio.gz
APPEND="printk.time=1 msr.allow_writes=on hwlab_inner.mode=early hwlab_inner.interval_ms=3600000"
flood=200000
gpa_pfn() { printf '%#x' $(($1 >> 12)); }
# poison_page CONSOLE IDX : poison the newest target's page IDX (sets gpa, pfn, t0)
poison_page() {
	gpa=$(page_field "$1" "$2" gpa)
	pfn=$(gpa_pfn "$gpa")
	poison_guest "$vmm_pid" "$gpa"
}
# now_ms : the outer kernel's uptime in ms (busybox date may lack %N)
now_ms() { awk '{ printf "%d", $1 * 1000 }' /proc/uptime; }
# stop_timed LOG : stop_vmm, and stop_ms: how long from SIGTERM to its end
stop_timed() {
	st_t0=$(now_ms)
	stop_vmm "$1" >/dev/null
	stop_ms=$(($(now_ms) - st_t0))
}
echo 1 >/proc/sys/vm/memory_failure_early_kill

# --- boot 1: a bogus vector, a masked entry, NMI delivery, a flood ----------
start_linux b1.log b1.con "$APPEND hwlab_inner.cpu=1 hwlab_inner.flood=$flood \
hwlab_inner.smca_hostile=bogus,masked,nmi,flood" --smca on --vcpus 2
grep -E 'INNER-BOOT|INNER-MODULE|INNER-MCE|LVT offset|FW_BUG|Firmware Bug' b1.con | sed 's/^/  con: /'
check msr-module "sid's msr module loaded in the guest (/dev/cpu/N/msr)" \
	grep -q "$REC"'INNER-MODULE name=msr status=loaded' b1.con

# hostile_ao N CASE LVT WHY : the n-th target's case wrote LVT; an AO for its
# page 3 is told by the poll because WHY, and the poll isolates the page
hostile_ao() {
	n=$1 c=$2 lvt=$3 why=$4
	wait_console b1.con 'INNER-READY tag=target' $((n + 1))
	grep "INNER-HOSTILE n=$n " b1.con | sed 's/^/  con: /'
	check "$c-lvt" "the guest wrote $lvt into its deferred-error LVT entry (MSR 0x852 of CPU 0)" \
		grep -q "${REC}INNER-HOSTILE n=$n case=$c msr_poke cpu=0 op=write msr=0x852 value=$lvt readback=$lvt" b1.con
	poison_page b1.con 3
	wait_for b1.log '"event":"sigbus"' "\"gpa\":\"$gpa\"" '"action":"inject"'
	json_line b1.log '"event":"sigbus"' "\"gpa\":\"$gpa\"" '"action":"inject"' >"$c.ao"
	sed 's/^/  vmm: /' "$c.ao"
	told=$(json-field "$c.ao" told)
	told_why=$(json-field "$c.ao" told_why)
	check "$c-told-poll" "LVT $lvt: the AO is left to the poll (told: $told)" test "$told" = poll
	check "$c-told-why" "LVT $lvt: told_why says $why ($told_why)" \
		line_has "$told_why" "$why"
	wait_console b1.con "Memory failure: $pfn: recovery action"
	check "$c-recovered" "LVT $lvt: the guest's 1 s poll isolates $pfn: Recovered" \
		grep -q "Memory failure: $pfn: recovery action for dirty LRU page: Recovered" b1.con
	wait_console b1.con 'INNER-EXIT tag=target' $((n + 1))
	check "$c-vmm-runs" "LVT $lvt: the VMM runs on" kill -0 "$vmm_pid"
}
hostile_ao 0 bogus 0x5 'vector below 32'
hostile_ao 1 masked 0x100f4 'masked'
hostile_ao 2 nmi 0x4f4 'not fixed'

# flood: CPU 0 reads an SMCA register as fast as it can while an AO comes
wait_console b1.con 'INNER-READY tag=target' 4
wait_console b1.con 'INNER-FLOOD start'
check flood-lvt "the flood's case put the kernel's own entry back (0xf4)" \
	grep -q "$REC"'INNER-HOSTILE n=3 case=flood msr_poke cpu=0 op=write msr=0x852 value=0xf4 readback=0xf4' b1.con
# (from here on CPU 0 floods without a pause: the first flood, then the endless one)
alive_start=$(grep -c "$REC"'INNER-ALIVE survivor=yes' b1.con)
poison_page b1.con 3
wait_for b1.log '"event":"sigbus"' "\"gpa\":\"$gpa\"" '"action":"inject"'
json_line b1.log '"event":"sigbus"' "\"gpa\":\"$gpa\"" '"action":"inject"' >flood.ao
sed 's/^/  vmm: /' flood.ao
check flood-told-interrupt "during the flood the AO is told by the deferred-error interrupt (told: $(json-field flood.ao told))" \
	test "$(json-field flood.ao told)" = interrupt
check flood-ao-vcpu0 "on vCPU 0, the flooding one" test "$(json-field flood.ao vcpu)" = 0
wait_console b1.con "Memory failure: $pfn: recovery action"
check flood-recovered "the guest isolates $pfn during the flood: Recovered" \
	grep -q "Memory failure: $pfn: recovery action for dirty LRU page: Recovered" b1.con
check flood-target-sigbus "the target on vCPU 1 got its BUS_MCEERR_AO" \
	grep -q "$REC"'INNER-SIGBUS tag=target .* code=BUS_MCEERR_AO .* idx=3$' b1.con
wait_console b1.con 'INNER-FLOOD done'
grep -E 'INNER-FLOOD|INNER-PIN' b1.con | sed 's/^/  con: /'
check flood-reads "the flood read MC0_STATUS $flood times, none refused" \
	grep -q "${REC}INNER-FLOOD done msr_poke cpu=0 op=flood msr=0xc0002001 reads=$flood failed=0 " b1.con
wait_console b1.con 'INNER-FLOOD again'
# the guest's other work: init's INNER-ALIVE lines (every 5 s) while CPU 0
# floods (two more than when the AO came)
wait_console b1.con 'INNER-ALIVE survivor=yes' $((alive_start + 2))
flood_ms=$(sed -n "s/${REC}INNER-FLOOD done .* ms=\([0-9]*\) .*/\3/p" b1.con)
alive=$(($(grep -c "$REC"'INNER-ALIVE survivor=yes' b1.con) - alive_start))
check flood-others-run "the guest's other work goes on while CPU 0 floods ($alive INNER-ALIVE lines since the AO; the first flood took ${flood_ms} ms)" \
	test "$alive" -ge 2
echo "  flooding again; SIGTERM"
stop_timed b1.log
show_console b1.con | grep -v INNER-PAGE | tail -n 8
check flood-sigterm "SIGTERM stops the VMM in $stop_ms ms while vCPU 0 floods (at most $(bound 10) s)" \
	test "$stop_ms" -lt $(($(bound 10) * 1000))
check flood-stopped "the VMM's exit says stopped" \
	sh -c "json-field b1.log status event=vmm_exit | grep -qx stopped"
json_line b1.log '"event":"smca"' '"vcpu":0' >flood.smca
sed 's/^/  vmm: /' b1.log | grep '"event":"smca"'
exits=$(json-field flood.smca msr_exits)
check flood-counted "vCPU 0's smca line counts the flood's MSR exits ($exits >= $flood)" \
	test "${exits:-0}" -ge "$flood"
check no-panic-1 "no oops, panic or unchecked MSR access in the guest" \
	sh -c "! grep -qE 'Kernel panic|Oops|BUG:|unchecked MSR' b1.con"

# --- boot 2: the banks are never cleared ------------------------------------
start_linux b2.log b2.con "$APPEND hwlab_inner.pages=80 hwlab_inner.check_interval=0 \
hwlab_inner.smca_hostile=masked" --smca on
# the banks that may hold a deferred error: all but the AR bank of the
# guest's MCG_CAP count (32 with --smca on: 31); then the vCPU's queue of
# 32 fills, and 9 more are refused
mcg_cap=$(json_line b2.log '"event":"vmm_start"' | json-field - mcg_cap)
dfr=$(( (${mcg_cap:-0} & 0xff) - 1 ))
pages=$((dfr + 32 + 9))
echo "  MCG_CAP $mcg_cap: $dfr deferred banks, $pages pages poisoned"
grep -E 'INNER-MCE|INNER-HOSTILE' b2.con | sed 's/^/  con: /'
check nobanks-32-banks "an SMCA guest has KVM's 32 banks, 31 for deferred errors (MCG_CAP $mcg_cap)" \
	test "$dfr" = 31
check nobanks-setup "the guest has no poll (check_interval 0) and masked its LVT entry" \
	sh -c "grep -q '${REC}INNER-MCE check_interval=0 ' b2.con &&
	       grep -q '${REC}INNER-HOSTILE n=0 case=masked .*readback=0x100f4\$' b2.con"
i=0
while [ $i -lt $pages ]; do
	poison_page b2.con $i
	i=$((i + 1))
done
# every AO dealt with for now: $dfr injected, 32 waiting, the rest refused
n=0
while [ "$(count_lines b2.log '"event":"sigbus"' '"si_code":"BUS_MCEERR_AO"')" -lt $((pages - 32)) ] &&
	[ $n -lt $((600 * HWLAB_TIME_FACTOR)) ]; do
	sleep 0.1
	n=$((n + 1))
done
alive_before=$(grep -c "$REC"'INNER-ALIVE' b2.con)
wait_console b2.con 'INNER-ALIVE' $((alive_before + 2))
check nobanks-guest-runs "the guest runs on with every bank full ($(grep -c "$REC"'INNER-ALIVE' b2.con) INNER-ALIVE lines)" \
	test "$(grep -c "$REC"'INNER-ALIVE' b2.con)" -ge $((alive_before + 2))
check nobanks-vmm-runs "the VMM runs on" kill -0 "$vmm_pid"
stop_timed b2.log
grep -E '"event":"(sigbus|smca|vmm_exit)"' b2.log | sed 's/^/  vmm: /' | cut -c1-400 | tail -n 14
check nobanks-sigterm "SIGTERM stops the VMM in $stop_ms ms (at most $(bound 10) s)" \
	test "$stop_ms" -lt $(($(bound 10) * 1000))
expect_count nobanks-injected $dfr b2.log '"event":"sigbus"' '"action":"inject"' '"told":"poll"' \
	'masked'
# each saying why: the banks the guest does not read (before, a full
# queue blamed a machine check in progress, and the AOs still waiting at
# the stop did not say what they waited for)
expect_count nobanks-refused $((pages - dfr - 32)) b2.log '"event":"sigbus"' '"action":"ignore"' \
	'queue is full (the guest has not read the deferred errors in its banks'
expect_count nobanks-waited 32 b2.log '"event":"sigbus"' '"action":"ignore"' \
	'the VM stopped first (it waited: the guest has not read the deferred errors in its banks'
check nobanks-exit-count "vmm_exit counts $((pages - dfr)) AOs not delivered, $dfr injected" \
	sh -c "json-field b2.log ao_not_delivered event=vmm_exit | grep -qx $((pages - dfr)) &&
		json-field b2.log injected event=vmm_exit | grep -qx $dfr"
check no-panic-2 "no oops, panic or unchecked MSR access in the guest" \
	sh -c "! grep -qE 'Kernel panic|Oops|BUG:|unchecked MSR' b2.con"
echo 0 >/proc/sys/vm/memory_failure_early_kill
finish
