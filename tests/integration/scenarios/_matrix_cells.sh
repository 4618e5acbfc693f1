# guest_matrix.sh's cells on the guest's own RAM backing: late kill (and
# the boot it rides on), early kill with the tuned or the default poll, two
# vCPUs. Sourced by guest_matrix.sh.

# late_cell K : boot, late kill, and the boot time (a guest that does not
# reach its target fails here, and the rest of its row is skipped)
late_cell() {
	k=$1
	echo 0 >/proc/sys/vm/memory_failure_early_kill
	# shellcheck disable=SC2086
	start_linux "$k-late.log" "$k-late.con" "$MATRIX_APPEND $ras hwlab_inner.pages=8" $backing
	# (--live: the VMM goes on writing its log)
	t_start=$(json-field --live "$k-late.log" t_ns event=vmm_start)
	t_boot=$(grep -m1 "$REC"'INNER-BOOT' "$k-late.con" | stamp_of)
	uptime=$(boot_uptime "$k-late.con")
	if ! grep -q "$REC"'INNER-READY tag=target' "$k-late.con"; then
		stop_vmm "$k-late.log" >/dev/null
		show_console "$k-late.con" | tail -n 20
		grep -E 'Kernel panic|WARNING|BUG|Oops|XSAVE' "$k-late.con" | head -n 5 | sed 's/^/  con: /'
		fail "$k-boot" "$kver reaches the inner /init in hwlab-vmm"
		measure "$k" boot vmm=hwlab to_init_ms=none \
			"reason=\"$(why_no_boot "$k-late.con" 'Kernel panic|Attempted|BUG')\""
		return 1
	fi
	pass "$k-boot" "$kver reaches the inner /init in hwlab-vmm ($(ms "$t_start" "$t_boot") ms; guest uptime $uptime s)"
	# (this boot carries rasdaemon's append; the boot-time cell is
	# boot_parity's, this one is the late kill's own)
	measure "$k" late-boot vmm=hwlab to_init_ms="$(ms "$t_start" "$t_boot")" guest_uptime_s="$uptime" \
		"version=\"$kver $kpkg\""
	poison_page "$k-late.con" 2
	wait_console "$k-late.con" 'INNER-RESTART n=1'
	wait_console "$k-late.con" 'INNER-ALIVE survivor=yes hardware_corrupted_kb=4'
	ras_wait "$k-late.con"
	stop_vmm "$k-late.log" >/dev/null
	show_console "$k-late.con" | grep -v INNER-PAGE | tail -n 12
	# every port or MMIO access no device answered (each one a KVM exit)
	measure "$k" io vmm=hwlab ignored="$(json-field "$k-late.log" io_ignored event=vmm_exit)"
	expect_count "$k-late-ar" 1 "$k-late.log" '"si_code":"BUS_MCEERR_AR"' "\"gpa\":\"$gpa\"" \
		'"action":"inject"' '"mci_status":"0xbc00080000000000"' '"bank":9'
	check "$k-late-recovered" "$kver: $pfn recovery action for dirty LRU page: Recovered" \
		grep -q "Memory failure: $pfn: recovery action for dirty LRU page: Recovered" "$k-late.con"
	check "$k-late-sigbus" "$kver: the inner target got BUS_MCEERR_AR and died of it" \
		grep -q "${REC}INNER-SIGBUS tag=target .* code=BUS_MCEERR_AR .* idx=2\$" "$k-late.con"
	check "$k-late-survivor" "$kver: the other inner process lives" \
		grep -q "$REC"'INNER-ALIVE survivor=yes hardware_corrupted_kb=4' "$k-late.con"
	check "$k-late-no-panic" "$kver: no oops or panic" \
		sh -c "! grep -qE 'Kernel panic|Oops|BUG:' $k-late.con"
	measure "$k" late vmm=hwlab recovered=$(grep -c "Memory failure: $pfn: recovery action .*: Recovered" "$k-late.con") \
		isolated_ms="$(guest_ms "$k-late.con" "$t0" "Memory failure: $pfn: recovery action" 0)"
	ras_cells "$k" late "$k-late.con" "$gpa" "$k-late.log"
}

# started K CELL CONSOLE : did start_linux's guest reach its target? If not,
# the cell fails with the guest's last words and the VMM's, and the VMM is
# stopped
started() {
	grep -q "$REC"'INNER-READY tag=target' "$3" && return 0
	stop_vmm "${3%.con}.log" >/dev/null
	grep -E 'INNER-|Kernel panic|WARNING|BUG|Oops|usage' "$3" | tail -n 8 | sed 's/^/  con: /'
	tail -n 4 "${3%.con}.log.err" 2>/dev/null | sed 's/^/  vmm: /'
	fail "$1-$2-started" "$kver: the guest's target is up (INNER-READY) in hwlab-vmm"
	return 1
}

# early_cell K INTERVAL : an AO; INTERVAL 1 (tuned) or default (the
# kernel's 300 s). The caller turns the outer early kill on.
early_cell() {
	k=$1 iv=$2 tag=early-tuned-1s
	[ "$iv" = default ] && tag=early-default-poll
	iv_ras=
	[ "$iv" = 1 ] && iv_ras=$ras
	start_linux "$k-$tag.log" "$k-$tag.con" "$MATRIX_APPEND $iv_ras hwlab_inner.mode=early \
hwlab_inner.interval_ms=3600000 hwlab_inner.check_interval=$iv" --mce-kill early $backing
	started "$k" "$tag" "$k-$tag.con" || return 1
	poison_page "$k-$tag.con" 3
	# the default poll may take its whole 300 s (and more on a busy machine)
	wait_console "$k-$tag.con" "Memory failure: $pfn: recovery action"
	wait_console "$k-$tag.con" 'INNER-EXIT tag=target'
	ras_wait "$k-$tag.con"
	stop_vmm "$k-$tag.log" >/dev/null
	show_console "$k-$tag.con" | grep -v INNER-PAGE | tail -n 8
	poll=$(sed -n "s/${REC}INNER-MCE check_interval=\([0-9a-z]*\) .*/\3/p" "$k-$tag.con" | head -n 1)
	expect_count "$k-$tag-ao" 1 "$k-$tag.log" '"si_code":"BUS_MCEERR_AO"' "\"gpa\":\"$gpa\"" \
		'"action":"inject"' '"mci_status":"0x9c00180000000000"'
	check "$k-$tag-recovered" "$kver (check_interval $poll s): $pfn isolated from the deferred error: Recovered" \
		grep -q "Memory failure: $pfn: recovery action for dirty LRU page: Recovered" "$k-$tag.con"
	check "$k-$tag-sigbus" "$kver: the target got BUS_MCEERR_AO before it read the page" \
		grep -q "${REC}INNER-SIGBUS tag=target .* code=BUS_MCEERR_AO .* idx=3\$" "$k-$tag.con"
	# what matched, if anything: the console is not kept after the run
	grep -E 'Kernel panic|Oops|BUG:' "$k-$tag.con" | head -n 5 | sed 's/^/  con: /'
	check "$k-$tag-no-panic" "$kver: no oops or panic" sh -c "! grep -qE 'Kernel panic|Oops|BUG:' $k-$tag.con"
	measure "$k" "$tag" vmm=hwlab check_interval_s="$poll" \
		recovered=$(grep -c "Memory failure: $pfn: recovery action .*: Recovered" "$k-$tag.con") \
		isolated_ms="$(guest_ms "$k-$tag.con" "$t0" "Memory failure: $pfn: recovery action" 0)"
	[ "$iv" = 1 ] && ras_cells "$k" early "$k-$tag.con" "$gpa" "$k-$tag.log"
}

# smp_cell K : two vCPUs, a page consumed on each
smp_cell() {
	k=$1
	start_linux "$k-smp.log" "$k-smp.con" "$MATRIX_APPEND hwlab_inner.cpu=alternate" --vcpus 2 $backing
	started "$k" smp "$k-smp.con" || return 1
	gpa0=$(page_field "$k-smp.con" 1 gpa)
	hwpoison-guest $vmm_pid "$gpa0" >/dev/null
	wait_console "$k-smp.con" 'INNER-READY tag=target' 2
	gpa1=$(page_field "$k-smp.con" 4 gpa)
	hwpoison-guest $vmm_pid "$gpa1" >/dev/null
	wait_console "$k-smp.con" 'INNER-READY tag=target' 3
	wait_console "$k-smp.con" 'INNER-ALIVE survivor=yes hardware_corrupted_kb=8'
	stop_vmm "$k-smp.log" >/dev/null
	check "$k-smp-cpus" "$kver brought up both vCPUs" grep -q "$REC"'INNER-BOOT .* cpus=2' "$k-smp.con"
	expect_count "$k-smp-ar-vcpu0" 1 "$k-smp.log" '"si_code":"BUS_MCEERR_AR"' "\"gpa\":\"$gpa0\"" \
		'"action":"inject"' '"vcpu":0'
	expect_count "$k-smp-ar-vcpu1" 1 "$k-smp.log" '"si_code":"BUS_MCEERR_AR"' "\"gpa\":\"$gpa1\"" \
		'"action":"inject"' '"vcpu":1'
	n=$(grep -c 'recovery action for dirty LRU page: Recovered' "$k-smp.con")
	check "$k-smp-recovered" "$kver recovered both pages (got $n)" test "$n" -eq 2
	check "$k-smp-survivor" "$kver: the other inner process lives through both" \
		grep -q "$REC"'INNER-ALIVE survivor=yes hardware_corrupted_kb=8' "$k-smp.con"
	measure "$k" smp vmm=hwlab recovered="$n"
}

# dfr_acts K : whether kernel K's deferred-error interrupt handler acts on
# the error (grades its severity, so memory_failure() runs): from 7.2's
# source it is machine_check_poll(); 6.1's and 6.12's log it without a
# severity (__log_error()) and clear the bank (docs/design.md, "Scalable MCA")
dfr_acts() {
	case "$1" in
	ours | bookworm | trixie) return 1 ;;
	esac
	return 0
}
# smca_cell K : AOs on a Scalable MCA vCPU (--smca on), the kernel's own
# poll interval (300 s), the target rereading its pages every 30 s:
# $smca_events times, page 3 of the newest target. A kernel whose handler
# acts isolates the page at the interrupt, before the target reads it again
# (its SIGBUS is BUS_MCEERR_AO); one whose handler only logs it loses the AO
# and recovers at the target's next read (an AR). Then, in the same guest,
# an AR through the SMCA registers.
smca_cell() {
	k=$1 tag=smca
	echo 1 >/proc/sys/vm/memory_failure_early_kill
	start_linux "$k-$tag.log" "$k-$tag.con" "$MATRIX_APPEND hwlab_inner.mode=early \
hwlab_inner.interval_ms=30000 hwlab_inner.check_interval=default" --smca on $backing
	started "$k" "$tag" "$k-$tag.con" || { echo 0 >/proc/sys/vm/memory_failure_early_kill; return 1; }
	grep -E 'LVT offset|SMCA|FW_BUG|Firmware Bug|x2apic|unchecked MSR' "$k-$tag.con" |
		head -n 8 | sed 's/^/  con: /'
	poll=$(sed -n "s/${REC}INNER-MCE check_interval=\([0-9a-z]*\) .*/\3/p" "$k-$tag.con" | head -n 1)
	sc_n=1 sc_iso= sc_act= sc_inj= sc_told_all=yes sc_ao_all=yes sc_codes= told= code=
	# a kernel that does not act on the interrupt waits 30 s for each
	# target's read, and keeps each AO in a bank until its 300 s poll: with
	# its nine deferred banks full the VMM holds the next AO (no injection
	# line to wait for). Three events show it
	sc_events=$smca_events
	dfr_acts "$k" || [ "$sc_events" -le 3 ] || sc_events=3
	while [ $sc_n -le "$sc_events" ]; do
		sc_ready=$(grep -c "$REC"'INNER-READY tag=target' "$k-$tag.con")
		poison_page "$k-$tag.con" 3
		wait_for "$k-$tag.log" '"event":"sigbus"' '"si_code":"BUS_MCEERR_AO"' '"action":"inject"' \
			"\"gpa\":\"$gpa\""
		json_line "$k-$tag.log" '"event":"sigbus"' '"si_code":"BUS_MCEERR_AO"' '"action":"inject"' \
			"\"gpa\":\"$gpa\"" >"$k-$tag.ao"
		told=$(json-field "$k-$tag.ao" told)
		t_inj=$(json-field "$k-$tag.ao" t_ns)
		wait_console "$k-$tag.con" 'INNER-READY tag=target' $((sc_ready + 1))
		code=$(grep "${REC}INNER-SIGBUS tag=target .* idx=3\$" "$k-$tag.con" | tail -n 1 |
			sed -n 's/.* code=\(BUS_MCEERR_A[OR]\) .*/\1/p')
		iso=$(guest_ms "$k-$tag.con" "$t0" "Memory failure: $pfn: recovery action" 0)
		# memory_failure()'s first line for the page (with early kill, its
		# SIGBUS to the target, sent after the unmap): the guest acted
		# there; the Recovered line waits for the console to print that one
		act=$(guest_ms "$k-$tag.con" "$t0" "Memory failure: $pfn: " 0)
		echo "  $k AO $sc_n: $gpa told=$told inject=$(ms "$t0" "$t_inj") ms acted=$act ms recovered=$iso ms target=$code"
		[ "$sc_n" = 1 ] && grep -E 'mce:|Memory failure|INNER-SIGBUS' "$k-$tag.con" |
			awk -v t0="$t0" '{ t = $1; sub(/^\[t_ns=/, "", t); sub(/\].*/, "", t); if (t + 0 >= t0) print }' |
			head -n 8 | sed 's/^/  con: /'
		[ "$told" = interrupt ] || sc_told_all=no
		[ "$code" = BUS_MCEERR_AO ] || sc_ao_all=no
		case $iso in [0-9]*) sc_iso="$sc_iso $iso" ;; esac
		case $act in [0-9]*) sc_act="$sc_act $act" ;; esac
		sc_inj="$sc_inj $(ms "$t0" "$t_inj")"
		sc_codes="$sc_codes ${code:-none}"
		sc_n=$((sc_n + 1))
	done
	printf '%s\n' $sc_iso >"$k-$tag.iso"
	printf '%s\n' $sc_act >"$k-$tag.act"
	iso_med=$(median "$k-$tag.iso")	# _matrix_boot.sh's
	act_med=$(median "$k-$tag.act")
	check "$k-$tag-recovered" "$kver: every AO's page isolated (Recovered): $sc_events" \
		test "$(echo $sc_iso | wc -w)" -eq "$sc_events"
	dfr=
	if dfr_acts "$k"; then
		check "$k-$tag-told-interrupt" "$kver (check_interval $poll s): each AO told by its deferred-error interrupt" \
			test "$sc_told_all" = yes
		check "$k-$tag-ao-first" "$kver: each target got BUS_MCEERR_AO before it read the page again (memory_failure() at the interrupt: median $act_med ms after the write, Recovered line $iso_med ms)" \
			test "$sc_ao_all" = yes
	else
		# the source says it logs the error and clears the bank: the page
		# waits for the target's next read (an AR), which is measured here
		echo "  $kver: told by $told ($(json-field "$k-$tag.ao" told_why)); its handler logs only; targets got:$sc_codes"
	fi
	# --- the AR, through the SMCA registers, in the same guest ---------------
	echo 0 >/proc/sys/vm/memory_failure_early_kill
	sc_ready=$(grep -c "$REC"'INNER-READY tag=target' "$k-$tag.con")
	poison_page "$k-$tag.con" 2
	wait_console "$k-$tag.con" 'INNER-READY tag=target' $((sc_ready + 1))
	wait_console "$k-$tag.con" 'INNER-ALIVE survivor=yes'
	stop_vmm "$k-$tag.log" >/dev/null
	show_console "$k-$tag.con" | grep -v INNER-PAGE | tail -n 6
	dfr=$(sed -n "s/${REC}INNER-IRQ dfr=\([0-9a-z]*\).*/\3/p" "$k-$tag.con" | tail -n 1)
	dfr_acts "$k" &&
		check "$k-$tag-dfr-counted" "$kver: its /proc/interrupts counted the deferred-error interrupts (DFR $dfr)" \
			test "${dfr:-0}" -ge "$sc_events" 2>/dev/null
	expect_count "$k-$tag-ar" 1 "$k-$tag.log" '"si_code":"BUS_MCEERR_AR"' "\"gpa\":\"$gpa\"" \
		'"action":"inject"' '"told":"machine_check"'
	check "$k-$tag-ar-recovered" "$kver: the AR's $pfn isolated through the SMCA registers: Recovered" \
		grep -q "Memory failure: $pfn: recovery action for dirty LRU page: Recovered" "$k-$tag.con"
	json_line "$k-$tag.log" '"event":"smca"' >"$k-$tag.smca"
	sed 's/^/  vmm: /' "$k-$tag.smca"
	exits=$(json-field "$k-$tag.smca" msr_exits)
	check "$k-$tag-msr-exits" "$kver: its SMCA and extended-LVT MSR accesses reached the VMM ($exits)" \
		test "${exits:-0}" -gt 0
	grep -E 'Kernel panic|Oops|BUG:|unchecked MSR' "$k-$tag.con" | head -n 5 | sed 's/^/  con: /'
	check "$k-$tag-no-panic" "$kver: no oops, panic or unchecked MSR access" \
		sh -c "! grep -qE 'Kernel panic|Oops|BUG:|unchecked MSR' $k-$tag.con"
	measure "$k" "$tag" vmm=hwlab check_interval_s="$poll" told="${told:-none}" \
		events="$sc_events" target_codes="$(echo $sc_codes | tr ' ' ,)" dfr_interrupts="${dfr:-none}" \
		inject_ms="$(echo $sc_inj | tr ' ' ,)" acted_ms="$(echo $sc_act | tr ' ' ,)" \
		isolated_ms="$(echo $sc_iso | tr ' ' ,)" acted_median_ms="$act_med" isolated_median_ms="$iso_med"
}
