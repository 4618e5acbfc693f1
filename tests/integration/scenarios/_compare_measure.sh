# compare.sh's measurement: whether a guest booted, what the inner kernel
# read from the bank and did, what each VMM reported, and the times, as one
# "HWLAB-MEASURE compare" line per event (tests/compare.py reads them).
# Sourced by compare.sh.

# wait_ready CONSOLE : until the guest's target is ready, the guest panicked
# or its VMM ended (bounded like wait_console); false when it did not boot,
# with the reason in noboot: its first panic line
wait_ready() {
	wr_n=0
	while ! grep -q "$REC"'INNER-READY tag=target' "$1" && ! grep -qE 'Kernel panic|Attempted to kill the idle task' "$1" &&
		kill -0 "$vmm_pid" 2>/dev/null && [ $wr_n -lt $((3000 * HWLAB_TIME_FACTOR)) ]; do
		sleep 0.1
		wr_n=$((wr_n + 1))
	done
	noboot=
	grep -q "$REC"'INNER-READY tag=target' "$1" && return 0
	# (as "panic: MESSAGE": outer-qemu/boot.sh takes a "Kernel panic" line
	# outside the "  con: " lines for the outer kernel's own)
	noboot=$({ grep -m1 'Kernel panic' "$1" || grep -m1 -E 'Attempted to kill|BUG:|Oops' "$1"; } |
		as_reason | sed 's/Kernel panic/kernel panic/')
	[ -n "$noboot" ] || noboot="no INNER-READY after $(grep -c . "$1") console lines"
	return 1
}
# mf_words FILE FRAGMENT... : a VMM's report of one event in QEMU's
# MEMORY_FAILURE words, recipient:action:AR|AO[:recursive] (joined by +),
# one for each report line that holds the fragments and all four members:
# hwlab-vmm's sigbus lines and the watch's memory_failure lines carry them
mf_words() {
	matching "$@" | while IFS= read -r mw_line; do
		mw_words=
		for mw_f in recipient action action_required recursive; do
			mw_v=$(printf '%s\n' "$mw_line" | json-field - "$mw_f") || continue 2
			mw_words=$mw_words:$mw_v
		done
		echo "${mw_words#:}"
	done | sed 's/:true:/:AR:/; s/:false:/:AO:/; s/:false$//; s/:true$/:recursive/' | tr '\n' '+' | sed 's/+$//'
}
# wait_outcome CONSOLE PFN : until the inner kernel recovered PFN, or panicked,
# or the VMM ended; bounded at 60 s
wait_outcome() {
	wo_n=0
	while ! grep -qE "Memory failure: $2: recovery action|Kernel panic" "$1" &&
		kill -0 "$vmm_pid" 2>/dev/null && [ $wo_n -lt 600 ]; do
		sleep 0.1
		wo_n=$((wo_n + 1))
	done
}
ms_since() { [ -n "$2" ] && echo $((($2 - $1) / 1000000)) || echo -; }
# first_stamp CONSOLE T0 ERE : the stamp of the first line at or after T0 matching
first_stamp() {
	grep -E -- "$3" "$1" | stamp_of | awk -v t0="$2" '$1 >= t0 { print; exit }'
}
# mce_console CONSOLE GPA : the guest's mce lines for GPA (a kernel without
# /dev/mcelog, such as Debian's, prints them itself:
# "CPU 0: Machine Check[ Exception]: MCG Bank B: STATUS", then
# "... ADDR A MISC M"), as "mcg bank status misc"
mce_console() {
	awk -v gpa="$2" '
	/Machine Check( Exception)?: [0-9a-f]+ Bank [0-9]+: [0-9a-f]+/ {
		s = $0; sub(/.*Machine Check( Exception)?: /, "", s); split(s, f, " ")
		mcg = "0x" f[1]; bank = f[3]; sub(/:$/, "", bank); st = "0x" f[4]; next
	}
	/ ADDR [0-9a-f]+/ && mcg != "" {
		s = $0; sub(/.* ADDR /, "", s); split(s, f, " ")
		if ("0x" f[1] == gpa) {
			m = $0; misc = "-"
			if (m ~ / MISC [0-9a-f]+/) { sub(/.* MISC /, "", m); split(m, g, " "); misc = "0x" g[1] }
			print mcg, bank, st, misc; exit
		}
	}' "$1"
}

# measure CASE CONSOLE IDX GPA T_WRITE T_INJECT REPORT [MORE] : one compare
# line for the current guest and VMM (REPORT: what the VMM itself said it
# did, no blanks; MORE: fields of the case's own, appended). GPA and IDX are
# the page the guest was told of.
measure() {
	m_case=$1 m_con=$2 m_idx=$3 m_gpa=$4 m_t0=$5 m_inj=$6 m_report=${7:--} m_more=${8:+ $8}
	m_pfn=$(printf '%#x' $((m_gpa >> 12)))
	# what the guest read: its /dev/mcelog record (mcelog_watch) for this
	# address; else its console's mce lines for it (a kernel without
	# /dev/mcelog, or a guest that panicked in its #MC handler)
	m_log=$(grep -m1 "${REC}INNER-MCELOG .* addr=$m_gpa " "$m_con")
	m_mcg='' m_bank='' m_status='' m_addr='' m_misc=''
	if [ -n "$m_log" ]; then
		m_mcg=$(echo "$m_log" | sed -n 's/.* mcgstatus=\([0-9a-fx]*\).*/\1/p')
		m_bank=$(echo "$m_log" | sed -n 's/.* bank=\([0-9]*\).*/\1/p')
		m_status=$(echo "$m_log" | sed -n 's/.* status=\([0-9a-fx]*\).*/\1/p')
		m_addr=$m_gpa
		m_misc=$(echo "$m_log" | sed -n 's/.* misc=\([0-9a-fx]*\).*/\1/p')
		m_from=mcelog
	else
		m_from=console
		# (read into its own fields: "set --" would take measure's arguments)
		read -r m_mcg m_bank m_status m_misc <<EOF
$(mce_console "$m_con" "$m_gpa")
EOF
		[ -n "$m_misc" ] && m_addr=$m_gpa
	fi
	if grep -q "Memory failure: $m_pfn: recovery action for .*: Recovered" "$m_con"; then
		m_inner=recovered
	elif grep -q 'Kernel panic' "$m_con"; then
		m_inner="panic:$(grep -m1 'Kernel panic' "$m_con" | sed 's/.*not syncing: //; s/ /_/g')"
	else
		m_inner=none
	fi
	m_sig=$(grep -m1 "${REC}INNER-SIGBUS tag=target .* idx=$m_idx\$" "$m_con" |
		sed -n 's/.*code=\([A-Z_]*\).*/\1/p')
	m_alive=no
	grep -q 'Kernel panic' "$m_con" || ! kill -0 "$vmm_pid" 2>/dev/null || m_alive=yes
	echo "HWLAB-MEASURE compare guest=$guest vmm=$vmm case=$m_case gpa=$m_gpa read_from=$m_from mcg_status=${m_mcg:--}" \
		"bank=${m_bank:--} mci_status=${m_status:--} mci_addr=${m_addr:--} mci_misc=${m_misc:--}" \
		"inner=$m_inner sigbus=${m_sig:--} survived=$m_alive vmm_report=$m_report" \
		"inject_ms=$(ms_since "$m_t0" "$m_inj")" \
		"mce_ms=$(guest_ms "$m_con" "$m_t0" "mce: |Machine check|INNER-MCELOG .* addr=$m_gpa |Memory failure: $m_pfn")" \
		"recovered_ms=$(guest_ms "$m_con" "$m_t0" "Memory failure: $m_pfn: recovery action")" \
		"recovered_serial_ms=$(ms_since "$m_t0" "$(first_stamp "$m_con" "$m_t0" "Memory failure: $m_pfn: recovery action")")$m_more" |
		tee -a compare.lines
}
# no_boot CASE... : the current VMM did not boot the current guest: one line
# per case, with the reason (the rest of the line)
no_boot() {
	for nb_case in "$@"; do
		echo "HWLAB-MEASURE compare guest=$guest vmm=$vmm case=$nb_case noboot=$noboot" | tee -a compare.lines
	done
}
