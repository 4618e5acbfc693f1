# rasdaemon in the Linux guest (guest-linux/init, hwlab_inner.ras=1): what
# it recorded of a machine check hwlab-vmm injected. Sourced by _lib.sh.
# ras_unavailable CONSOLE : init's reason when the guest has no rasdaemon (an
# image built without it: the suite lacks the package; a kernel without the
# tracepoints), else nothing
ras_unavailable() { sed -n "s/${REC}INNER-RAS unavailable reason=//p" "$1" | head -n 1; }
# ras_wait CONSOLE [N] : before the VMM is stopped, until rasdaemon's N (1)
# mce and N memory_failure rows are on the console, when it runs at all
# (bounded as wait_console)
ras_wait() {
	grep -q "$REC"'INNER-RAS ready' "$1" || return 0
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
	rc_line=$(grep -m 1 "$REC"'INNER-RAS ready' "$rc_con")
	[ -z "$rc_line" ] || echo "  ${rc_line#*INNER-RAS }"
	check "$rc_name-ras-ready" "rasdaemon recording, mce:mce_record and ras:memory_failure_event enabled" \
		sh -c 'case "$1" in *events=*mce:mce_record*) ;; *) exit 1 ;; esac
		       case "$1" in *events=*ras:memory_failure_event*) ;; *) exit 1 ;; esac' - "$rc_line"
	rc_n=$(grep -c "${REC}INNER-RAS mce id=[0-9]* bank=$rc_bank status=$rc_status addr=$rc_gpa " "$rc_con")
	check "$rc_name-ras-mce" \
		"rasdaemon's mce_record: one row bank ${rc_bank:-?} status ${rc_status:-?} addr $rc_gpa (got $rc_n)" \
		test -n "$rc_bank" -a -n "$rc_status" -a "$rc_n" -eq 1
	rc_type=$(sed -n "s/.*Memory failure: $rc_pfn: recovery action for \(.*\): Recovered.*/\1/p" \
		"$rc_con" | head -n 1)
	rc_n=$(grep -c "${REC}INNER-RAS memory_failure id=[0-9]* pfn=$rc_pfn type=\"${rc_type:-?}\" result=Recovered " \
		"$rc_con")
	check "$rc_name-ras-memory-failure" \
		"rasdaemon's memory_failure_event: one row pfn $rc_pfn type '$rc_type' (the inner kernel's) Recovered (got $rc_n)" \
		test -n "$rc_type" -a "$rc_n" -eq 1
}
