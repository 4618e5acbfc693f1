# compare.sh's events, per VMM: a guest booted in hwlab-vmm or a QEMU, its
# target's page poisoned (late kill, an AR; early kill, an AO) and measured,
# and the cases each guest runs in each VMM. Sourced by compare.sh.

# start_hwlab LOG CONSOLE "GUEST ARGS" VMM_ARGS... : boot the guest in
# hwlab-vmm in the background (sets vmm_pid); false when it did not boot
# (noboot says why; the VMM is stopped)
start_hwlab() {
	sh_log=$1 sh_con=$2 sh_app=$3
	shift 3
	: >"$sh_con"
	timeout -s KILL "$(bound "${VMM_TIMEOUT:-420}")" hwlab-vmm --kernel "$LINUX_KERNEL" \
		--initrd "$LINUX_INITRD" --console "$sh_con" --console-stamp \
		--append "$(linux_append "printk.time=1 $sh_app")" "$@" >"$sh_log" 2>"$sh_log.err" &
	vmm_pid=$!
	if ! wait_ready "$sh_con"; then
		echo "  start_hwlab: hwlab-vmm did not boot $guest: $noboot"
		stop_vmm "$sh_log" | tail -n 5 | sed 's/Kernel panic/kernel panic/'
		return 1
	fi
	echo "  start_hwlab: pid $vmm_pid, guest ready: $(grep -c . "$sh_con") console lines"
}
# qemu_event CASE N GUEST_ARGS : boot QEMU, poison the target's page 2, measure
# (a boot per event: QEMU 7.2's guest does not live through one); false when
# the guest did not boot (noboot says why)
qemu_event() {
	qe_con=q-$gtag-$uq_suite-$1-$2.con
	if ! start_qemu $qe_con "$3"; then
		[ -n "$noboot" ] ||
			check $gtag-$vmm-$1-$2-started "libvirt started $vmm (see the watch's lines above)" false
		stop_qemu
		return 1
	fi
	gpa=$(page_field $qe_con 2 gpa)
	qemu_poison "$gpa"
	wait_outcome $qe_con "$(printf '%#x' $((gpa >> 12)))"
	# its own report: the MEMORY_FAILURE event, as libvirt delivered it to
	# the watch (QEMU asks the kernel for early kill of itself: an AO can
	# come as well as the AR)
	wait_lv "$lv" '"event":"memory_failure"'
	t_inj=$(qemu_inject_time "$t0")
	measure $1 $qe_con 2 "$gpa" "$t0" "$t_inj" "$(mf_words "$lv" '"event":"memory_failure"')"
	stop_qemu
	if [ "$2" = 1 ]; then
		echo "  $vmm $1: $out"
		qemu_show $qe_con
		check $gtag-$vmm-$1-libvirt "$guest: $vmm started by its own libvirt's embedded driver (pid $vmm_pid)" \
			json_line "$lv" '"event":"domain_started"' "\"pid\":$vmm_pid"
		check $gtag-$vmm-$1-tool "$guest: hwpoison-guest found $vmm's page for GPA $gpa through libvirt" \
			sh -c "echo '$out' | grep -q '\"pid\":$vmm_pid,\"gpa\":\"$gpa\"'"
		check $gtag-$vmm-$1-injected "$guest: $vmm reported its injection for GPA $gpa on stderr and as a MEMORY_FAILURE event" \
			sh -c "grep -q 'Guest MCE Memory Error .*GUEST addr $gpa of type' $qemu_log &&
			       grep -q '\"recipient\":\"guest\",\"action\":\"inject\"' $lv"
	fi
}
# qemu_events CASE GUEST_ARGS : $events QEMU boots, one event each
qemu_events() {
	qs_n=1
	while [ $qs_n -le "$events" ]; do
		qemu_event "$1" $qs_n "$2" || return 1
		qs_n=$((qs_n + 1))
	done
}

# hwlab_events CASE N GUEST_ARGS VMM_ARGS : one boot, N pages poisoned one after
# another (the target replaces each page it lost and goes on); false when
# the guest did not boot
hwlab_events() {
	he_con=h-$gtag-$1.con he_log=h-$gtag-$1.log
	start_hwlab $he_log $he_con "hwlab_inner.pages=$(($2 + 2)) hwlab_inner.on_sigbus=recover $3" $4 || return 1
	he_i=0
	while [ $he_i -lt "$2" ]; do
		idx=$((he_i + 2))
		gpa=$(page_field $he_con $idx gpa)
		poison_guest "$vmm_pid" "$gpa"
		wait_outcome $he_con "$(printf '%#x' $((gpa >> 12)))"
		wait_console $he_con "INNER-SIGBUS tag=target .* idx=$idx\$"
		wait_for $he_log '"event":"sigbus"' "\"gpa\":\"$gpa\"" '"action":"inject"'
		t_inj=$(json-field --live $he_log t_ns event=sigbus gpa="$gpa" action=inject | head -n 1)
		he_rep=$(mf_words $he_log '"event":"sigbus"' "\"gpa\":\"$gpa\"")
		# how the guest was told of an AO (interrupt or poll: the default case)
		he_told=$(json_line $he_log '"event":"sigbus"' "\"gpa\":\"$gpa\"" '"action":"inject"' | json-field - told 2>/dev/null)
		measure $1 $he_con $idx "$gpa" "$t0" "$t_inj" "${he_rep:--}" "told=${he_told:--}"
		he_i=$((he_i + 1))
	done
	stop_vmm $he_log >/dev/null
	check $gtag-hwlab-vmm-$1-recovered "$guest: hwlab-vmm: the inner kernel recovered all $2 pages, the target got a SIGBUS for each, no panic" \
		sh -c "[ \$(grep -c 'Memory failure: .*: recovery action for .*: Recovered' $he_con) -ge $2 ] &&
		       [ \$(grep -c '${REC}INNER-SIGBUS tag=target' $he_con) -ge $2 ] && ! grep -q 'Kernel panic' $he_con"
}
# --- one guest in one VMM: its cases -----------------------------------------
# cases_of_guest [SUITE] : the cases the current guest runs here (in that
# suite's QEMU: dying and default in sid's QEMU 11.1 alone), of those wanted
# (compare.sh's want and full)
cases_of_guest() {
	if [ "$gtag" = trixie ] || [ "$gtag" = bookworm ]; then
		cg_all=default
	elif [ "$gtag" = ours ] || [ "$stock_all" = 1 ]; then
		cg_all="late early hugetlb outside dying default"
	else
		cg_all="late early dying default"
	fi
	for cg_c in $cg_all; do
		want $cg_c || continue
		case $cg_c in
		dying) { [ "$gtag" = ours ] || full dying; } && { [ -z "${1:-}" ] || { [ "$1" = sid ] && full dying; }; } || continue ;;
		default) full default && { [ -z "${1:-}" ] || [ "$1" = sid ]; } || continue ;;
		esac
		echo $cg_c
	done
}
# no_boot_rest CASE... : no_boot for each of them that has no line yet
no_boot_rest() {
	for nr_c in "$@"; do
		grep -q "guest=$guest vmm=$vmm case=$nr_c \|guest=$guest vmm=$vmm backing=[^ ]* case=$nr_c " compare.lines ||
			no_boot $nr_c
	done
}
# run_qemu SUITE : the current guest's cases in that suite's QEMU
run_qemu() {
	use_qemu "$1"
	rq_cases=$(cases_of_guest "$1")
	for rq_c in $rq_cases; do
		noboot=
		case $rq_c in
		# late kill: the vCPU consumes the poison (AR)
		late)
			echo 0 >/proc/sys/vm/memory_failure_early_kill
			qemu_events late "hwlab_inner.pages=8" ;;
		# early kill: the outer kernel tells the VMM first (AO); the target
		# rereads its pages only every 30 s
		early)
			echo 1 >/proc/sys/vm/memory_failure_early_kill
			qemu_events early "hwlab_inner.mode=early hwlab_inner.interval_ms=30000" ;;
		hugetlb) each_huge_event qemu_huge_event ;;
		outside) qemu_outside "$1" ;;
		dying) dying_row qemu ;;
		default)
			echo 1 >/proc/sys/vm/memory_failure_early_kill
			qemu_events default "$DEFAULT_ARGS" ;;
		esac
		if [ -n "$noboot" ]; then
			no_boot_rest $rq_cases
			return
		fi
	done
}
# qemu_outside SUITE : outside guest RAM: a page of the VMM's own heap, early
# kill (an AO)
qemu_outside() {
	echo 1 >/proc/sys/vm/memory_failure_early_kill
	if start_qemu q-$gtag-$1-outside.con "hwlab_inner.pages=8"; then
		outside_event q-$gtag-$1-outside.con
		wait_lv "$lv" '"event":"memory_failure"'
		outside_line "$(mf_words "$lv" '"event":"memory_failure"')"
		grep -E 'memory error|Memory Error' $qemu_log | sed "s/^/  $vmm(stderr): /"
		sed 's/^/  watch: /' "$lv"
	else
		check $gtag-$vmm-outside-started "libvirt started $vmm (see the watch's lines above)" false
	fi
	stop_qemu
}
# run_hwlab : the current guest's cases in hwlab-vmm
run_hwlab() {
	vmm=hwlab-vmm
	rh_cases=$(cases_of_guest)
	for rh_c in $rh_cases; do
		noboot=
		case $rh_c in
		late)
			echo 0 >/proc/sys/vm/memory_failure_early_kill
			hwlab_events late "$events" "" ;;
		early)
			echo 1 >/proc/sys/vm/memory_failure_early_kill
			hwlab_events early "$events" "hwlab_inner.mode=early hwlab_inner.interval_ms=30000" "--mce-kill early" ;;
		hugetlb) each_huge_event hwlab_huge_event ;;
		outside) hwlab_outside ;;
		dying)
			dying_row shared
			[ -n "$noboot" ] || dying_row private ;;
		# a kernel that does not act on the deferred-error interrupt keeps
		# each AO in a bank until its 300 s poll, and with its deferred
		# banks full the VMM holds the next: 3 events in one boot at most
		default)
			echo 1 >/proc/sys/vm/memory_failure_early_kill
			hwlab_events default $((events < 3 ? events : 3)) "$DEFAULT_ARGS" "--mce-kill early --smca on" ;;
		esac
		if [ -n "$noboot" ]; then
			no_boot_rest $rh_cases
			return
		fi
	done
}
# hwlab_outside : outside guest RAM, hwlab-vmm
hwlab_outside() {
	echo 1 >/proc/sys/vm/memory_failure_early_kill
	if start_hwlab h-$gtag-outside.log h-$gtag-outside.con "hwlab_inner.pages=8" --mce-kill early; then
		outside_event h-$gtag-outside.con
		outside_line "$(mf_words h-$gtag-outside.log '"event":"sigbus"' '"gpa":null')"
		stop_vmm h-$gtag-outside.log | grep -E '"gpa":null|vmm_exit|stderr'
		# Its own memory is the VMM's to lose: what it must do is say so,
		# an AO ignored as outside guest RAM, and if it then touches the
		# page, a fatal report naming it, never a silent death
		check $gtag-hwlab-outside "$guest: hwlab-vmm: its poisoned heap page reported as outside guest RAM (AO ignored, or fatal when touched)" \
			sh -c "grep -q '\"si_code\":\"BUS_MCEERR_AO\".*\"gpa\":null.*\"action\":\"ignore\".*outside guest RAM' h-$gtag-outside.log &&
			       { grep -q '\"event\":\"vmm_exit\"' h-$gtag-outside.log ||
			         grep -q '\"si_code\":\"BUS_MCEERR_AR\".*\"action\":\"fatal\"' h-$gtag-outside.log; }"
	fi
}
