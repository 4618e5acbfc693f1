# compare.sh's two cases of issue #24: a target that DIES of its SIGBUS on a
# lost 2 MiB (dying), and the time to isolation with the guest's default
# MCE poll (default). Sourced by compare.sh.

# --- dying: a lost 2 MiB whose target dies ------------------------------------
# The THP target of the hugetlb case, but it exits at its SIGBUS and the
# guest's init starts another; the outer kernel kills early (the VMM gets an
# AO for the whole 2 MiB). The target's THP then goes back to the guest's
# free lists: every page of it the guest was not told of yet is a page the
# guest may hand to its own kernel, and die at its first touch ("Fatal
# local machine check"). hwlab-vmm --backing hugetlb-shared salvages the 511
# healthy pages (only the bad 4 KiB stays lost): 0 deaths, checked.
# --backing hugetlb (private) tells 9 pages per guest poll, QEMU 11.1 one
# page: measured, each event must end in one of the two states.
DYING_ARGS="hwlab_inner.thp=1 hwlab_inner.pages=512 hwlab_inner.restart=1 hwlab_inner.on_sigbus=exit hwlab_inner.interval_ms=200"
DEATH_ERE='Kernel panic|Fatal local machine check|unrecoverable error in kernel context|Attempted to kill'

# dying_pool SPARE : free huge pages for one 128 MiB guest (64) and SPARE
# more (a salvage moves the 511 healthy pages into a fresh one each event)
dying_pool() {
	dp_free=$(awk '/^HugePages_Free:/ { print $2 }' /proc/meminfo)
	echo $(($(cat /proc/sys/vm/nr_hugepages) + 64 + $1 - dp_free)) >/proc/sys/vm/nr_hugepages
}
# target_pid CONSOLE : the newest target's pid (its INNER-READY)
target_pid() { sed -n "s/${REC}INNER-READY tag=target pid=\([0-9]*\) .*/\3/p" "$1" | tail -n 1; }
# since FILE N : FILE without its first N lines
since() { tail -n +$(($2 + 1)) "$1"; }

# dying_state KIND CONSOLE LOG PID CON_AT LOG_AT : wait, from the poison of
# target PID's page (CONSOLE and LOG had CON_AT and LOG_AT lines then), until
# the guest died (a death line, its VMM gone, hwlab-vmm's vmm_exit) or lived:
# PID exited, a new target reported its pages, for hwlab-vmm's private
# hugetlb the spread of the 2 MiB is done, and after all that the guest
# printed a fresh INNER-ALIVE (it went on living). Sets state (lived, died
# or none: neither within the bound) and death (the death's console line).
dying_state() {
	ds_kind=$1 ds_con=$2 ds_log=$3 ds_pid=$4 ds_cat=$5 ds_lat=$6 ds_n=0 ds_alive=
	state=none death=-
	while [ $ds_n -lt "$(bound 6000)" ]; do
		since "$ds_con" "$ds_cat" >"$ds_con.ev"
		ds_line=$(grep -m1 -E "$DEATH_ERE" "$ds_con.ev")
		if [ -n "$ds_line" ] || ! kill -0 "$vmm_pid" 2>/dev/null ||
			{ [ "$ds_kind" != qemu ] && since "$ds_log" "$ds_lat" | grep -q '"event":"vmm_exit"'; }; then
			state=died
			# (a VMM gone without a line: say so)
			[ -n "$ds_line" ] || ds_line=$(grep -m1 -E "$DEATH_ERE" "$ds_con")
			death=$(printf '%s\n' "${ds_line:-vmm gone}" | as_reason | sed 's/^mce: \[Hardware Error\]: //; s/ /_/g')
			return
		fi
		ds_done=no
		if grep -q "${REC}INNER-EXIT tag=target pid=$ds_pid " "$ds_con.ev" &&
			sed -n "/${REC}INNER-EXIT tag=target pid=$ds_pid /,\$p" "$ds_con.ev" | grep -q "$REC"'INNER-READY tag=target'; then
			ds_done=yes
			[ "$ds_kind" = private ] &&
				! since "$ds_log" "$ds_lat" | grep '"event":"poison_spread"' | grep -q '"status":"done"' && ds_done=no
		fi
		if [ $ds_done = yes ]; then
			# the INNER-ALIVE count once all that held; lived at the next one
			[ -n "$ds_alive" ] || ds_alive=$(grep -c "$REC"'INNER-ALIVE survivor=yes' "$ds_con.ev")
			if [ "$(grep -c "$REC"'INNER-ALIVE survivor=yes' "$ds_con.ev")" -gt "$ds_alive" ]; then
				state=lived
				return
			fi
		fi
		sleep 0.2
		ds_n=$((ds_n + 1))
	done
}

# dying_told KIND LOG LOG_AT LV T0 : the pages of the lost 2 MiB the VMM told
# its guest since the event began: hwlab-vmm's injections (its sigbus
# inject line, and the pages its spread told); QEMU's MEMORY_FAILURE events
# to its guest (the watch's lines at or after T0)
dying_told() {
	case $1 in
	qemu)
		json-field --live "$4" t_ns event=memory_failure recipient=guest action=inject |
			awk -v t0="$5" '$1 >= t0 { n++ } END { print n + 0 }' ;;
	*)
		since "$2" "$3" >"$2.ev"
		dt_inj=$(grep '"event":"sigbus"' "$2.ev" | grep -c '"action":"inject"')
		dt_spread=$(grep '"event":"poison_spread"' "$2.ev" | grep '"status":"done"' |
			sed -n 's/.*"told":\([0-9]*\).*/\1/p' | awk '{ n += $1 } END { print n + 0 }')
		echo $((dt_inj + dt_spread)) ;;
	esac
}
# dying_told_kinds LOG : of the SIGBUS injections in dying_told's last
# snapshot (LOG.ev), how many were for an AR and how many pages distinct
# ("ar=N pages=N"; the spread's pages are not in them, and a guest that died
# has its told count from vmm_exit instead): an AO the guest has not acted
# on yet when the target touches the page is followed by that page's AR,
# two machine checks for one page
dying_told_kinds() {
	case $1 in
	/dev/null) echo "ar=- pages=-" ;;
	*)
		echo "ar=$(grep '"event":"sigbus"' "$1.ev" | grep '"action":"inject"' | grep -c '"si_code":"BUS_MCEERR_AR"')" \
			"pages=$(grep '"event":"sigbus"' "$1.ev" | grep '"action":"inject"' |
				sed -n 's/.*"mci_addr":"\(0x[0-9a-f]*\)".*/\1/p' | sort -u | grep -c .)" ;;
	esac
}

# dying_row KIND : N (dying_events) events of the current guest in one VMM
# row: hwlab-vmm on hugetlb-shared (KIND shared) or private hugetlb
# (private), or the current QEMU on its libvirt's hugetlbfs (qemu). As many
# events as the guest lives through in one boot, another boot after a death.
dying_row() {
	dr_n=1 dr_boot=0
	case $1 in
	shared) dr_backing=hugetlb-shared ;;
	private) dr_backing=hugetlb ;;
	qemu) dr_backing=hugetlbfs ;;
	esac
	echo 1 >/proc/sys/vm/memory_failure_early_kill
	while [ $dr_n -le "$dying_events" ]; do
		dr_boot=$((dr_boot + 1))
		if [ $1 = qemu ]; then
			dr_con=q-$gtag-$uq_suite-dying-$dr_boot.con dr_log=/dev/null
			dying_pool 1
			VMM_TIMEOUT=$((600 + 300 * dying_events)) start_qemu $dr_con "$DYING_ARGS" hugetlb
		else
			dr_con=h-$gtag-dying-$1-$dr_boot.con dr_log=h-$gtag-dying-$1-$dr_boot.log
			dying_pool $((dying_events - dr_n + 2))
			VMM_TIMEOUT=$((600 + 300 * dying_events)) start_hwlab $dr_log $dr_con "$DYING_ARGS" \
				--backing $dr_backing
		fi
		dr_rc=$?
		if [ $dr_rc != 0 ]; then
			if [ -n "$noboot" ]; then
				echo "HWLAB-MEASURE compare guest=$guest vmm=$vmm backing=$dr_backing case=dying noboot=$noboot" |
					tee -a compare.lines
			else
				check $gtag-$vmm-dying-$1-started "$guest: $vmm started on $dr_backing RAM (see the lines above)" false
			fi
			# (start_hwlab stopped its VMM already)
			[ $1 = qemu ] && stop_qemu
			return 1
		fi
		state=lived dr_told_boot=0
		while [ $state = lived ] && [ $dr_n -le "$dying_events" ]; do
			dr_pid=$(target_pid $dr_con)
			dr_base=$(page_field $dr_con 0 gpa)
			dr_thp=no
			one_thp $dr_con "$dr_base" && dr_thp=yes
			gpa=$(page_field $dr_con 2 gpa)
			dr_cat=$(grep -c '' $dr_con)
			dr_lat=$(grep -c '' $dr_log)
			if [ $1 = qemu ]; then
				qemu_poison "$gpa"
			else
				poison_guest "$vmm_pid" "$gpa"
			fi
			dying_state $1 $dr_con $dr_log "$dr_pid" "$dr_cat" "$dr_lat"
			# the target's death: the guest kernel's SIGBUS for its touch of
			# an unmapped poisoned page ("MCE: Killing NAME:PID"), at the
			# guest's printk time; else the serial arrival of its own
			# SIGBUS line, or of init's word of its exit
			dr_ms=$(guest_ms $dr_con "$t0" "MCE: Killing [^ ]*:$dr_pid " 0)
			[ "$dr_ms" = - ] &&
				dr_ms=$(ms_since "$t0" "$(first_stamp $dr_con "$t0" "${REC_E}(INNER-SIGBUS tag=target pid=$dr_pid |INNER-EXIT tag=target pid=$dr_pid )")")
			dr_told=$(dying_told $1 $dr_log "$dr_lat" "${lv:-}" "$t0")
			# a guest that died before the spread was done: what hwlab-vmm
			# injected in this boot (its vmm_exit line) less the events before
			if [ $state != lived ] && [ $1 != qemu ]; then
				stop_vmm $dr_log | grep -E '"event":"(hugetlb_salvage|vmm_exit)"|"status":"done"' | head -n 4
				dr_inj=$(json-field --live $dr_log injected event=vmm_exit | head -n 1)
				[ -n "$dr_inj" ] && dr_told=$((dr_inj - dr_told_boot))
			fi
			dr_told_boot=$((dr_told_boot + dr_told))
			echo "HWLAB-MEASURE compare guest=$guest vmm=$vmm backing=$dr_backing case=dying event=$dr_n" \
				"boot=$dr_boot outcome=$state death=$death gpa=$gpa huge_base=$dr_base thp=$dr_thp" \
				"pages_told=$dr_told told_$(dying_told_kinds $dr_log | sed 's/ / told_/')" \
				"pages_isolated=$(recovered_in $dr_con $((dr_base >> 12)))" \
				"target_death_ms=$dr_ms" | tee -a compare.lines
			dr_n=$((dr_n + 1))
		done
		if [ $1 = qemu ]; then
			stop_qemu
		elif [ $state = lived ]; then
			stop_vmm $dr_log | grep -E '"event":"(hugetlb_salvage|vmm_exit)"|"status":"done"' | head -n 4
		fi
		# the first death's last words
		[ $state = died ] && [ ! -f dying-$gtag-$vmm-$1.shown ] && : >dying-$gtag-$vmm-$1.shown &&
			grep -E -B3 -A3 "$DEATH_ERE" $dr_con | head -n 16 | sed "s/^/  con: [$vmm $dr_backing] /"
		[ $state = none ] && echo "  $vmm $dr_backing: event $((dr_n - 1)) ended in neither state (see $dr_con)"
	done
	return 0
}

# dying_checks : 0 deaths on hugetlb-shared per guest, and every event of
# every row ended lived or died
dying_checks() {
	for dc_g in $(sed -n 's/^HWLAB-MEASURE compare guest=\([^ ]*\) vmm=hwlab-vmm backing=hugetlb-shared case=dying event=.*/\1/p' compare.lines | sort -u); do
		dc_tag=ours
		[ "$dc_g" = bzImage ] || dc_tag=${dc_g%%-*}
		dc_all=$(grep -c "guest=$dc_g vmm=hwlab-vmm backing=hugetlb-shared case=dying event=" compare.lines)
		dc_died=$(grep "guest=$dc_g vmm=hwlab-vmm backing=hugetlb-shared case=dying event=" compare.lines |
			grep -vc ' outcome=lived ')
		# the same count without the salvage: the private row's (the same
		# target on the same guest, the whole 2 MiB lost) would fail it
		dc_priv=$(grep "guest=$dc_g vmm=hwlab-vmm backing=hugetlb case=dying event=" compare.lines |
			grep -vc ' outcome=lived ')
		echo "  $dc_g: without the salvage (private hugetlb, the same target): $dc_priv deaths in" \
			"$(grep -c "guest=$dc_g vmm=hwlab-vmm backing=hugetlb case=dying event=" compare.lines) events"
		check $dc_tag-hwlab-vmm-dying-shared-0-deaths "$dc_g: hwlab-vmm hugetlb-shared: 0 guest deaths (or events in neither state) in $dc_all of $dying_events events whose target died of its SIGBUS (got $dc_died)" \
			test "$dc_all" -eq "$dying_events" -a "$dc_died" -eq 0
	done
	dc_none=$(grep ' case=dying event=' compare.lines | grep -vc -E ' outcome=(lived|died) ')
	check dying-states "every dying-target event, in every row, ended with the guest living or dying ($(grep -c ' case=dying event=' compare.lines) events; $dc_none in neither)" \
		test "$dc_none" -eq 0 -a "$(grep -c ' case=dying event=' compare.lines)" -gt 0
}

# --- default: the guest's own MCE poll ---------------------------------------
# The early-kill AO with the kernel's DEFAULT check_interval (300 s) and a
# target that rereads its pages every 30 s (guest_matrix's smca cell):
# hwlab-vmm with --smca on tells a guest that enabled its deferred-error
# interrupt at once (told=interrupt), the others by poll; QEMU has no SMCA.
# How the target heard: BUS_MCEERR_AO (isolated before it touched the page)
# or BUS_MCEERR_AR (at its reread).
DEFAULT_ARGS="hwlab_inner.mode=early hwlab_inner.check_interval=default hwlab_inner.interval_ms=30000"
