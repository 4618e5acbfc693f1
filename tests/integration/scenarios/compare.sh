# Side by side with QEMU (issue #12), in one outer-VM boot: the distro's
# QEMU (-accel kvm, packed into this image with its libraries and
# firmware), run by libvirt as its users run it, and hwlab-vmm each boot the
# same bzImage and initramfs, and the same page of the same inner process is
# poisoned from the outer kernel's debugfs. For QEMU, hwpoison-guest is a
# libvirt client: its watch (--watch --start) starts the domain through the
# embedded driver (qemu:///embed, no daemon: the driver runs in the client,
# so the one watch process starts the domain, finds QEMU's pid and the
# GPA -> HVA through libvirt, poisons, and hears QEMU's own MEMORY_FAILURE
# events). Per VMM and case one "HWLAB-MEASURE compare" line: what the inner
# kernel read from the bank (MCG_STATUS, MCi_STATUS, ADDR, MISC, from its
# mce log lines), what it did, whether the inner process got its SIGBUS and
# the guest lived, each VMM's own report in QEMU's MEMORY_FAILURE words
# (recipient:action:AR|AO), and the times from the corrupt-pfn write, all
# on the outer VM's CLOCK_MONOTONIC (QEMU's console goes through
# hwlab-stamp; its injection time is its event's arrival at the watch).
# tests/compare.py makes the table (make compare). The checks hold what
# must be true of each VMM; which guest survives is measured, not assumed.
. /hwlab/scenarios/_lib.sh
# a request to a watch that died fails its write (EPIPE), not this script
trap '' PIPE
QEMU=/usr/bin/qemu-system-x86_64
LIBVIRT_CONF=/hwlab/lib/libvirt-qemu.conf
. /hwlab/lib/libvirt_embed.sh
lv_root=/tmp/libvirt
embed_root_init $lv_root
lv_uri=$(embed_uri $lv_root)
qemu_log=$lv_root/log/qemu/hwlab-qemu.log

# qemu_domain_xml "GUEST ARGS" [hugetlb] : the domain: what the QMP-driven
# runs gave QEMU on its command line (-accel kvm -cpu host -m 128 -smp 1,
# -kernel, -initrd, -append, a serial port, no reboot), in libvirt's words;
# the serial port is a pipe (/tmp/qcon.out) that hwlab-stamp reads. With
# hugetlb, guest RAM is on the outer kernel's 2 MiB pages, as libvirt users
# ask for it (memoryBacking/hugepages: a hugetlbfs file under /dev/hugepages)
qemu_domain_xml() {
	cat <<EOF
<domain type='kvm'>
  <name>hwlab-qemu</name>
  <memory unit='MiB'>128</memory>
$([ "${2:-}" = hugetlb ] && echo "  <memoryBacking><hugepages/></memoryBacking>")
  <vcpu>1</vcpu>
  <cpu mode='host-passthrough'/>
  <os>
    <type arch='x86_64' machine='pc'>hvm</type>
    <kernel>$LINUX_KERNEL</kernel>
    <initrd>$LINUX_INITRD</initrd>
    <cmdline>$(linux_append "$1")</cmdline>
  </os>
  <on_poweroff>destroy</on_poweroff>
  <on_reboot>destroy</on_reboot>
  <on_crash>destroy</on_crash>
  <devices>
    <emulator>$QEMU</emulator>
    <serial type='pipe'><source path='/tmp/qcon'/></serial>
    <controller type='usb' model='none'/>
    <memballoon model='none'/>
  </devices>
</domain>
EOF
}
# wait_lv FILE FRAGMENT... : until the watch wrote a line with them all, or
# it ended; bounded at 120 s
wait_lv() {
	wl_f=$1 wl_n=0
	shift
	while ! json_line "$wl_f" "$@" >/dev/null && kill -0 "$watch_pid" 2>/dev/null &&
		[ $wl_n -lt 1200 ]; do
		sleep 0.1
		wl_n=$((wl_n + 1))
	done
	json_line "$wl_f" "$@" >/dev/null
}
# start_qemu CONSOLE "GUEST ARGS" [hugetlb] : boot the Linux guest in QEMU
# through libvirt (sets vmm_pid, QEMU's pid, and lv, the watch's output) and
# wait for its target's INNER-READY
start_qemu() {
	sq_con=$1 sq_app=$2 sq_backing=${3:-}
	lv=${sq_con%.con}.lv
	: >"$sq_con"
	rm -f /tmp/qcon.in /tmp/qcon.out /tmp/lv.req
	mkfifo /tmp/qcon.in /tmp/qcon.out /tmp/lv.req
	mkdir -p "$(dirname $qemu_log)" && : >$qemu_log
	qemu_domain_xml "$sq_app" "$sq_backing" >/tmp/qemu.xml
	# opens when QEMU does; ends when QEMU goes
	hwlab-stamp </tmp/qcon.out >"$sq_con" &
	stamp_pid=$!
	timeout -s KILL "${VMM_TIMEOUT:-180}" hwpoison-guest --connect "$lv_uri" --watch \
		--domain hwlab-qemu --start /tmp/qemu.xml </tmp/lv.req >"$lv" 2>"$lv.err" &
	watch_pid=$!
	exec 3>/tmp/lv.req
	wait_lv "$lv" '"event":"watch_ready"'
	vmm_pid=$(sed -n 's/.*"event":"domain_started".*"pid":\([0-9]*\).*/\1/p' "$lv")
	if [ -z "$vmm_pid" ]; then
		sed 's/^/  watch: /' "$lv" "$lv.err"
		vmm_pid=$watch_pid
		return 1
	fi
	wait_console "$sq_con" 'INNER-READY tag=target'
	echo "  start_qemu: libvirt's QEMU pid $vmm_pid, guest ready: $(grep -c . "$sq_con") console lines"
}
# stop_qemu : the watch destroys the domain it started and ends
stop_qemu() {
	echo quit >&3 2>/dev/null
	exec 3>&-
	sq_n=0
	while kill -0 "$watch_pid" 2>/dev/null && [ $sq_n -lt 300 ]; do
		sleep 0.1
		sq_n=$((sq_n + 1))
	done
	kill -KILL "$watch_pid" "$vmm_pid" "$stamp_pid" 2>/dev/null
	wait
}
# mf_words FILE FRAGMENT... : a VMM's report of one event in QEMU's
# MEMORY_FAILURE words, recipient:action:AR|AO[:recursive] (joined by +);
# hwlab-vmm's sigbus lines and the watch's memory_failure lines both carry
# them, in that order
mf_words() {
	matching "$@" |
		sed -n 's/.*"recipient":"\([a-z]*\)","action":"\([a-z]*\)","action_required":\([a-z]*\),"recursive":\([a-z]*\).*/\1:\2:\3:\4/p' |
		sed 's/:true:/:AR:/; s/:false:/:AO:/; s/:false$//; s/:true$/:recursive/' | tr '\n' '+' | sed 's/+$//'
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

# measure VMM CASE CONSOLE IDX GPA T_WRITE T_INJECT REPORT [MORE] : one compare
# line (REPORT: what the VMM itself said it did, no blanks; MORE: fields of
# the case's own, appended). GPA and IDX are the page the guest was told of.
measure() {
	m_con=$3 m_idx=$4 m_gpa=$5 m_t0=$6 m_inj=$7 m_report=${8:--} m_more=${9:+ $9}
	m_pfn=$(printf '%#x' $((m_gpa >> 12)))
	# what the guest read: its /dev/mcelog record (mcelog_watch) for this
	# address; a guest that panicked in its #MC handler never got there,
	# so then its console's "Machine Check Exception: MCG Bank B: STATUS"
	m_log=$(grep -m1 "INNER-MCELOG .* addr=$m_gpa " "$m_con")
	if [ -n "$m_log" ]; then
		m_mcg=$(echo "$m_log" | sed -n 's/.* mcgstatus=\([0-9a-fx]*\).*/\1/p')
		m_bank=$(echo "$m_log" | sed -n 's/.* bank=\([0-9]*\).*/\1/p')
		m_status=$(echo "$m_log" | sed -n 's/.* status=\([0-9a-fx]*\).*/\1/p')
		m_addr=$m_gpa
		m_misc=$(echo "$m_log" | sed -n 's/.* misc=\([0-9a-fx]*\).*/\1/p')
		m_from=mcelog
	else
		m_mce=$(grep -m1 'Machine Check Exception:' "$m_con")
		m_mcg=$(echo "$m_mce" | sed -n 's/.*Machine Check Exception: \([0-9a-f]*\) Bank.*/0x\1/p')
		m_bank=$(echo "$m_mce" | sed -n 's/.* Bank \([0-9]*\): .*/\1/p')
		m_status=$(echo "$m_mce" | sed -n 's/.* Bank [0-9]*: \([0-9a-f]*\).*/0x\1/p')
		m_addr=$(grep -m1 'mce: \[Hardware Error\]: .*ADDR ' "$m_con" | sed -n 's/.*ADDR \([0-9a-f]*\).*/0x\1/p')
		m_misc=$(grep -m1 'mce: \[Hardware Error\]: .*MISC ' "$m_con" | sed -n 's/.*MISC \([0-9a-f]*\).*/0x\1/p')
		m_from=console
	fi
	if grep -q "Memory failure: $m_pfn: recovery action for .*: Recovered" "$m_con"; then
		m_inner=recovered
	elif grep -q 'Kernel panic' "$m_con"; then
		m_inner="panic:$(grep -m1 'Kernel panic' "$m_con" | sed 's/.*not syncing: //; s/ /_/g')"
	else
		m_inner=none
	fi
	m_sig=$(grep -m1 "INNER-SIGBUS tag=target .* idx=$m_idx\$" "$m_con" | sed -n 's/.*code=\([A-Z_]*\).*/\1/p')
	m_alive=no
	grep -q 'Kernel panic' "$m_con" || ! kill -0 "$vmm_pid" 2>/dev/null || m_alive=yes
	echo "HWLAB-MEASURE compare vmm=$1 case=$2 gpa=$m_gpa read_from=$m_from mcg_status=${m_mcg:--}" \
		"bank=${m_bank:--} mci_status=${m_status:--} mci_addr=${m_addr:--} mci_misc=${m_misc:--}" \
		"inner=$m_inner sigbus=${m_sig:--} survived=$m_alive vmm_report=$m_report" \
		"inject_ms=$(ms_since "$m_t0" "$m_inj")" \
		"mce_line_ms=$(ms_since "$m_t0" "$(first_stamp "$m_con" "$m_t0" "mce: |Machine check|INNER-MCELOG .* addr=$m_gpa |Memory failure: $m_pfn")")" \
		"recovered_ms=$(ms_since "$m_t0" "$(first_stamp "$m_con" "$m_t0" "Memory failure: $m_pfn: recovery action")")$m_more" |
		tee -a compare.lines
}

# qemu_poison GPA : ask the watch to poison GPA of QEMU's guest; sets out (the
# watch's poison line) and t0 (the time of the corrupt-pfn write)
qemu_poison() {
	echo "poison $1" >&3
	wait_lv "$lv" '"event":"poison_done"' "\"gpa\":\"$1\""
	out=$(json_line "$lv" '"event":"poison"' "\"gpa\":\"$1\"")
	t0=$(echo "$out" | sed -n 's/.*"t_ns":\([0-9]*\)}/\1/p')
}
# qemu_inject_time T0 : when the watch heard QEMU's first injection into its
# guest at or after T0 (its MEMORY_FAILURE event, recipient guest)
qemu_inject_time() {
	matching "$lv" '"event":"memory_failure"' '"recipient":"guest"' '"action":"inject"' |
		sed -n 's/.*"t_ns":\([0-9]*\)}/\1/p' | awk -v t0="$1" '$1 >= t0 { print; exit }'
}
# qemu_show CONSOLE : the watch's lines, the guest's machine-check lines and
# QEMU's own memory-error lines, for a case's first event
qemu_show() {
	sed 's/^/  watch: /' "$lv"
	grep -E 'Machine check|Memory failure|mce:|panic|INNER-SIGBUS|INNER-MCELOG' "$1" |
		sed 's/^/  con: [qemu] /'
	grep -E 'MCE|memory error|Memory Error' $qemu_log | sed 's/^/  qemu(stderr): /'
}
# qemu_event CASE N GUEST_ARGS : boot QEMU, poison the target's page 2, measure
# (its guest does not live through one: a boot per event)
qemu_event() {
	qe_con=q-$1-$2.con
	if ! start_qemu $qe_con "$3"; then
		check qemu-$1-$2-started "libvirt started QEMU (see the watch's lines above)" false
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
	measure qemu $1 $qe_con 2 "$gpa" "$t0" "$t_inj" "$(mf_words "$lv" '"event":"memory_failure"')"
	stop_qemu
	if [ "$2" = 1 ]; then
		echo "  qemu $1: $out"
		qemu_show $qe_con
		check qemu-$1-libvirt "libvirt's embedded driver started QEMU (pid $vmm_pid)" \
			json_line "$lv" '"event":"domain_started"' "\"pid\":$vmm_pid"
		check qemu-$1-tool "hwpoison-guest found QEMU's page for GPA $gpa through libvirt" \
			sh -c "echo '$out' | grep -q '\"pid\":$vmm_pid,\"gpa\":\"$gpa\"'"
		check qemu-$1-injected "QEMU reported its injection for GPA $gpa on stderr and as a MEMORY_FAILURE event" \
			sh -c "grep -q 'Guest MCE Memory Error .*GUEST addr $gpa of type' $qemu_log &&
			       grep -q '\"recipient\":\"guest\",\"action\":\"inject\"' $lv"
	fi
}

# hwlab_events CASE N GUEST_ARGS VMM_ARGS : one boot, N pages poisoned one after
# another (the target replaces each page it lost and goes on)
hwlab_events() {
	he_con=h-$1.con
	start_linux h-$1.log $he_con "hwlab_inner.pages=$(($2 + 2)) hwlab_inner.on_sigbus=recover $3" $4
	he_i=0
	while [ $he_i -lt "$2" ]; do
		idx=$((he_i + 2))
		gpa=$(page_field $he_con $idx gpa)
		out=$(hwpoison-guest "$vmm_pid" "$gpa" 2>&1)
		t0=$(echo "$out" | sed -n 's/.*"t_ns":\([0-9]*\)}/\1/p')
		wait_outcome $he_con "$(printf '%#x' $((gpa >> 12)))"
		wait_console $he_con "INNER-SIGBUS tag=target .* idx=$idx\$"
		wait_for h-$1.log '"event":"sigbus"' "\"gpa\":\"$gpa\"" '"action":"inject"'
		t_inj=$(json_line h-$1.log '"event":"sigbus"' "\"gpa\":\"$gpa\"" '"action":"inject"' |
			sed -n 's/.*"t_ns":\([0-9]*\)}/\1/p')
		he_rep=$(mf_words h-$1.log '"event":"sigbus"' "\"gpa\":\"$gpa\"")
		measure hwlab-vmm $1 $he_con $idx "$gpa" "$t0" "$t_inj" "${he_rep:--}"
		he_i=$((he_i + 1))
	done
	stop_vmm h-$1.log >/dev/null
	check hwlab-$1-recovered "hwlab-vmm: the inner kernel recovered all $2 pages, the target got a SIGBUS for each, no panic" \
		sh -c "[ \$(grep -c 'Memory failure: .*: recovery action for .*: Recovered' $he_con) -ge $2 ] &&
		       [ \$(grep -c 'INNER-SIGBUS tag=target' $he_con) -ge $2 ] && ! grep -q 'Kernel panic' $he_con"
}

# --- 2 MiB hugetlb backing --------------------------------------------------
# Each VMM's guest RAM on the outer kernel's hugetlb pool: libvirt's
# memoryBacking/hugepages (a hugetlbfs file), hwlab-vmm's --backing hugetlb
# (MAP_HUGETLB). The target keeps its 512 pages in one guest THP, 2 MiB
# aligned in guest-physical memory and so in one host huge page: the 2 MiB
# lost is all its own (a guest-kernel page in there would be fatal at its
# first touch, in either VMM). The outer kernel names the whole 2 MiB in its
# SIGBUS (si_addr_lsb 21: kernel patch 0001 for the vCPU's AR; the head
# page for an AO). What each VMM tells its guest of it is the row.
huge_args="hwlab_inner.thp=1 hwlab_inner.pages=512 hwlab_inner.restart=0 hwlab_inner.on_sigbus=recover hwlab_inner.interval_ms=200"
# hugetlb_pool : free huge pages for one 128 MiB guest (64), one to spare;
# every event loses one to the poison for good
hugetlb_pool() {
	hp_free=$(awk '/^HugePages_Free:/ { print $2 }' /proc/meminfo)
	echo $(($(cat /proc/sys/vm/nr_hugepages) + 65 - hp_free)) >/proc/sys/vm/nr_hugepages
}
# one_thp CONSOLE BASE : the target's 512 pages are one 2 MiB-aligned guest
# THP at BASE (asked before the poison: a target that recovers replaces its
# lost pages with others)
one_thp() {
	[ -n "$2" ] && [ $(($2 & 0x1fffff)) -eq 0 ] &&
		[ "$(page_field "$1" 511 gpa)" = "$(printf '%#x' $(($2 + 0x1ff000)))" ]
}
# qemu_huge_event N : one QEMU boot on hugetlb RAM, the target's page 2 poisoned
qemu_huge_event() {
	qh_con=q-hugetlb-$1.con
	hugetlb_pool
	if ! start_qemu $qh_con "$huge_args" hugetlb; then
		check qemu-hugetlb-$1-started "libvirt started QEMU on hugetlb RAM (see the watch's lines above)" false
		stop_qemu
		return 1
	fi
	qh_base=$(page_field $qh_con 0 gpa)
	qh_thp=no
	one_thp $qh_con "$qh_base" && qh_thp=yes
	gpa=$(page_field $qh_con 2 gpa)
	qemu_poison "$gpa"
	wait_lv "$lv" '"event":"memory_failure"' '"action":"inject"'
	# the page QEMU told its guest of, in its own stderr line
	told=$(sed -n 's/.*GUEST addr \(0x[0-9a-f]*\) of type .* injected.*/\1/p' $qemu_log | head -n 1)
	[ -n "$told" ] || told=$gpa
	wait_outcome $qh_con "$(printf '%#x' $((told >> 12)))"
	t_inj=$(qemu_inject_time "$t0")
	measure qemu hugetlb $qh_con $(((told - qh_base) / 4096)) "$told" "$t0" "$t_inj" \
		"$(mf_words "$lv" '"event":"memory_failure"')" \
		"poisoned=$gpa huge_base=$qh_base lsb=- pages_recovered=$(recovered_in $qh_con $((qh_base >> 12)))"
	# libvirt 9.0 writes QEMU's command line into its log, -object as JSON
	qh_backed=no
	grep -q '"qom-type":"memory-backend-file".*"mem-path":"/dev/hugepages/' $qemu_log && qh_backed=yes
	stop_qemu
	if [ "$1" = 1 ]; then
		echo "  qemu hugetlb: $out"
		qemu_show $qh_con
		grep -v ' info : \| warning : ' "$lv.err" | sed 's/^/  watch(stderr): /'
		grep -o '"qom-type":"memory-backend-[a-z]*"[^}]*' $qemu_log | sed 's/^/  qemu(ram): /'
		check qemu-hugetlb-backed "libvirt gave QEMU's guest RAM a hugetlbfs file (mem-path=/dev/hugepages/...)" \
			test $qh_backed = yes
		check qemu-hugetlb-thp "the target's 512 pages are one 2 MiB-aligned guest THP ($qh_base)" \
			test $qh_thp = yes
	fi
}
# hwlab_huge_event N : one hwlab-vmm boot on hugetlb RAM, the target's page 2
# poisoned; it waits for the guest to have isolated the whole 2 MiB
hwlab_huge_event() {
	hh_con=h-hugetlb-$1.con hh_log=h-hugetlb-$1.log
	hugetlb_pool
	start_linux $hh_log $hh_con "$huge_args" --backing hugetlb
	hh_base=$(page_field $hh_con 0 gpa)
	hh_thp=no
	one_thp $hh_con "$hh_base" && hh_thp=yes
	gpa=$(page_field $hh_con 2 gpa)
	out=$(hwpoison-guest "$vmm_pid" "$gpa" 2>&1)
	t0=$(echo "$out" | sed -n 's/.*"t_ns":\([0-9]*\)}/\1/p')
	wait_for $hh_log '"event":"sigbus"' '"action":"inject"'
	# its first injection: the page it told the guest of, when, the lsb it
	# acted on, and its report (each later AR is an injection of its own)
	json_line $hh_log '"event":"sigbus"' '"action":"inject"' >$hh_log.first
	told=$(sed -n 's/.*"mci_addr":"\(0x[0-9a-f]*\)".*/\1/p' $hh_log.first)
	[ -n "$told" ] || told=$gpa
	t_inj=$(sed -n 's/.*"t_ns":\([0-9]*\)}/\1/p' $hh_log.first)
	hh_lsb=$(sed -n 's/.*"lsb":\([0-9]*\).*/\1/p' $hh_log.first)
	wait_recovered $hh_con $((hh_base >> 12))
	wait_for $hh_log '"event":"poison_spread"' '"status":"done"'
	measure hwlab-vmm hugetlb $hh_con $(((told - hh_base) / 4096)) "$told" "$t0" "$t_inj" \
		"$(mf_words $hh_log.first '"event":"sigbus"')" \
		"poisoned=$gpa huge_base=$hh_base lsb=${hh_lsb:--} pages_recovered=$(recovered_in $hh_con $((hh_base >> 12))) spread_ms=$(spread_ms $hh_log)"
	stop_vmm $hh_log >/dev/null
	if [ "$1" = 1 ]; then
		grep -E '"event":"(sigbus|poison_spread)"' $hh_log | head -n 4 | sed 's/^/  vmm: /'
		check hwlab-hugetlb-thp "the target's 512 pages are one 2 MiB-aligned guest THP ($hh_base)" \
			test $hh_thp = yes
	fi
}

# heap_page PID : a present page (pagemap bit 63) of the process's [heap],
# as a hex address: the last present one of its first 256 pages, and never
# its first page: in a static binary (hwlab-vmm) that holds the main
# thread's TLS, errno included, which any signal handler touches; measured,
# the VMM then dies in its SIGBUS handler ("MCE: Killing"), before it can
# say anything. Nothing if there is none.
heap_page() {
	hp_range=$(awk '$6 == "[heap]" { print $1; exit }' /proc/$1/maps)
	[ -n "$hp_range" ] || return 1
	hp_va=$((0x${hp_range%-*} + 4096)) hp_end=$((0x${hp_range#*-}))
	[ $hp_end -gt $((hp_va + 256 * 4096)) ] && hp_end=$((hp_va + 256 * 4096))
	hp_found=
	while [ $hp_va -lt $hp_end ]; do
		# the entry's last byte holds bit 63 (present) in its top bit
		hp_b=$(dd if=/proc/$1/pagemap bs=8 skip=$((hp_va / 4096)) count=1 2>/dev/null |
			od -An -tu1 | awk '{ print $8 }')
		[ "${hp_b:-0}" -ge 128 ] && hp_found=$hp_va
		hp_va=$((hp_va + 4096))
	done
	[ -n "$hp_found" ] && printf '%#x\n' $hp_found
}

# outside_event VMM CONSOLE : poison a page of the VMM's own heap (not guest
# RAM) by pid and address (debugfs corrupt-va, kernel patch 0002), early
# kill; sets oe_va, and oe_alive: whether the VMM and its guest are still
# alive at the guest's next two INNER-ALIVE lines (every 5 s)
outside_event() {
	oe_va=$(heap_page "$vmm_pid")
	alive_then=$(grep -c 'INNER-ALIVE survivor=yes' "$2")
	echo "$vmm_pid $oe_va" >/sys/kernel/debug/hwpoison/corrupt-va
	echo "  $1 outside RAM: poisoned its heap page $oe_va (corrupt-va exit $?)"
	wait_console "$2" 'INNER-ALIVE survivor=yes' $((alive_then + 2))
	oe_alive=no
	kill -0 "$vmm_pid" 2>/dev/null &&
		[ "$(grep -c 'INNER-ALIVE survivor=yes' "$2")" -ge $((alive_then + 2)) ] && oe_alive=yes
}
# outside_line VMM REPORT : its compare line
outside_line() {
	echo "HWLAB-MEASURE compare vmm=$1 case=outside gpa=- heap_va=$oe_va survived=$oe_alive" \
		"vmm_report=${2:--}" | tee -a compare.lines
}

# Per case and VMM: make compare asks for 20 (hwlab.compare_events=20), the
# table's median and p99; make test's run checks the same things on 5, since
# each QEMU event is a whole QEMU boot under TCG (about 11 s idle, several
# times that on a loaded CI machine)
events=${HWLAB_COMPARE_EVENTS:-5}
# hugetlb: 2 in make test, since each hwlab-vmm event waits for its guest to
# isolate all 512 pages (about a minute under TCG); make compare asks for 20
huge_events=2
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	hwlab.compare_events=*) events=${arg#*=} ;;
	hwlab.compare_huge_events=*) huge_events=${arg#*=} ;;
	esac
done
check qemu-present "the comparison image carries QEMU and its libraries" $QEMU --version
: >compare.lines

# qemu_events CASE GUEST_ARGS : $events QEMU boots, one event each
qemu_events() {
	qs_n=1
	while [ $qs_n -le "$events" ]; do
		qemu_event "$1" $qs_n "$2" || break
		qs_n=$((qs_n + 1))
	done
}

# late kill: the vCPU consumes the poison (AR)
echo 0 >/proc/sys/vm/memory_failure_early_kill
qemu_events late "hwlab_inner.pages=8"
hwlab_events late "$events" ""

# 2 MiB hugetlb backing, late kill: a boot per event for each VMM
mkdir -p /dev/hugepages
mount -t hugetlbfs hugetlbfs /dev/hugepages
qs_n=1
while [ $qs_n -le "$huge_events" ]; do
	qemu_huge_event $qs_n || break
	qs_n=$((qs_n + 1))
done
qs_n=1
while [ $qs_n -le "$huge_events" ]; do
	hwlab_huge_event $qs_n
	qs_n=$((qs_n + 1))
done
echo 0 >/proc/sys/vm/nr_hugepages

# early kill: the outer kernel tells the VMM first (AO); the target rereads
# its pages only every 30 s
echo 1 >/proc/sys/vm/memory_failure_early_kill
qemu_events early "hwlab_inner.mode=early hwlab_inner.interval_ms=30000"
hwlab_events early "$events" "hwlab_inner.mode=early hwlab_inner.interval_ms=30000" "--mce-kill early"

# outside guest RAM: a page of the VMM's own heap, early kill (an AO)
start_qemu q-outside.con "hwlab_inner.pages=8" ||
	check qemu-outside-started "libvirt started QEMU (see the watch's lines above)" false
outside_event qemu q-outside.con
wait_lv "$lv" '"event":"memory_failure"'
outside_line qemu "$(mf_words "$lv" '"event":"memory_failure"')"
grep -E 'memory error|Memory Error' $qemu_log | sed 's/^/  qemu(stderr): /'
stop_qemu
sed 's/^/  watch: /' "$lv"
grep -E 'panic' q-outside.con | sed 's/^/  con: [qemu] /'
start_linux h-outside.log h-outside.con "hwlab_inner.pages=8" --mce-kill early
outside_event hwlab-vmm h-outside.con
outside_line hwlab-vmm "$(mf_words h-outside.log '"event":"sigbus"' '"gpa":null')"
stop_vmm h-outside.log | grep -E '"gpa":null|vmm_exit|stderr'
# Its own memory is the VMM's to lose: what it must do is say so, an AO
# ignored as outside guest RAM, and if it then touches the page, a fatal
# report naming it, never a silent death
check hwlab-outside "hwlab-vmm: its poisoned heap page reported as outside guest RAM (AO ignored, or fatal when touched)" \
	sh -c "grep -q '\"si_code\":\"BUS_MCEERR_AO\".*\"gpa\":null.*\"action\":\"ignore\".*outside guest RAM' h-outside.log &&
	       { grep -q '\"event\":\"vmm_exit\"' h-outside.log ||
	         grep -q '\"si_code\":\"BUS_MCEERR_AR\".*\"action\":\"fatal\"' h-outside.log; }"
echo 0 >/proc/sys/vm/memory_failure_early_kill
# One vocabulary: each VMM's own report of every event, in QEMU's
# MEMORY_FAILURE words (QEMU's through libvirt, hwlab-vmm's own lines)
check same-words "every event's report, from both VMMs, reads recipient:action:AR|AO" \
	awk '/^HWLAB-MEASURE compare / { for (i = 1; i <= NF; i++) if ($i ~ /^vmm_report=/) { r = substr($i, 12); n++
		if (r !~ /^((guest|hypervisor):(ignore|inject|fatal|reset|stop):A[RO](:recursive)?\+?)+$/) bad = 1 } }
		END { exit bad || !n }' compare.lines
check outside-words "its own heap page: QEMU and hwlab-vmm both report recipient hypervisor, action ignore (an AO)" \
	sh -c "grep -q 'vmm=qemu case=outside .*vmm_report=hypervisor:ignore:AO' compare.lines &&
	       grep -q 'vmm=hwlab-vmm case=outside .*vmm_report=hypervisor:ignore:AO' compare.lines"

# What each VMM's guest read back, per event: hwlab-vmm's are exactly what
# it reports injecting (docs/design.md: QEMU 9.1's AMD encodings), from the
# guest's own /dev/mcelog; QEMU 7.2's are its Intel encodings, as its guest
# printed them before it died. The guest's fate is in the table, measured.
# values VMM CASE N FRAGMENT... : VMM/CASE has N event lines, and every one has them all
values() {
	v_vmm=$1 v_case=$2 v_want=$3
	shift 3
	v_all=$(grep -c "vmm=$v_vmm case=$v_case " compare.lines)
	v_ok=$(matching compare.lines "vmm=$v_vmm case=$v_case " "$@" | grep -c .)
	check $v_vmm-$v_case-values "$v_vmm $v_case: $v_ok of $v_all events (want $v_want) read back $*" \
		test "$v_all" -eq "$v_want" -a "$v_ok" -eq "$v_all"
}
values hwlab-vmm late "$events" read_from=mcelog mcg_status=0x7 bank=9 mci_status=0xbc00080000000000 \
	mci_misc=0x8c inner=recovered sigbus=BUS_MCEERR_AR survived=yes
values hwlab-vmm early "$events" read_from=mcelog bank=8 mci_status=0x9c00180000000000 mci_misc=0x8c \
	inner=recovered sigbus=BUS_MCEERR_AO survived=yes
# QEMU's late kill: its AR, or the AO of its own early kill (QEMU sets
# PR_MCE_KILL_EARLY for itself) when that reached the guest first
ar=$(count_lines compare.lines "vmm=qemu case=late " mcg_status=0x7 mci_status=0xbd80000000000134 mci_misc=0x8c)
ao=$(count_lines compare.lines "vmm=qemu case=late " mcg_status=0x5 mci_status=0xbd000000000000c0 mci_misc=0x8c)
check qemu-late-values "qemu late: $ar events read back QEMU 7.2's Intel AR values, $ao its AO values, of $events" \
	test $((ar + ao)) -eq "$events"
values qemu early "$events" mcg_status=0x5 bank=9 mci_status=0xbd000000000000c0 mci_misc=0x8c
# hugetlb: hwlab-vmm's guest is told the 4 KiB page it touched (Linux
# ignores an MCi_MISC LSB above 12) and then every other page of the 2 MiB
values hwlab-vmm hugetlb "$huge_events" read_from=mcelog mcg_status=0x7 bank=9 mci_status=0xbc00080000000000 \
	mci_misc=0x8c inner=recovered sigbus=BUS_MCEERR_AR survived=yes lsb=21 pages_recovered=512
# in_lost_page : every hugetlb line's told and poisoned GPAs lie in its
# huge_base's 2 MiB; and there is one per event and VMM
in_lost_page() {
	ilp_n=0
	while read -r ilp_line; do
		ilp_told=$(echo "$ilp_line" | sed -n 's/.* gpa=\(0x[0-9a-f]*\) .*/\1/p')
		ilp_poisoned=$(echo "$ilp_line" | sed -n 's/.* poisoned=\(0x[0-9a-f]*\) .*/\1/p')
		ilp_base=$(echo "$ilp_line" | sed -n 's/.* huge_base=\(0x[0-9a-f]*\) .*/\1/p')
		for ilp_a in "$ilp_told" "$ilp_poisoned"; do
			[ -n "$ilp_a" ] && [ -n "$ilp_base" ] && [ $((ilp_a)) -ge $((ilp_base)) ] &&
				[ $((ilp_a)) -lt $((ilp_base + 0x200000)) ] || return 1
		done
		ilp_n=$((ilp_n + 1))
	done <<EOF
$(grep ' case=hugetlb ' compare.lines)
EOF
	[ $ilp_n -eq $((2 * huge_events)) ]
}
ar=$(count_lines compare.lines "vmm=qemu case=hugetlb " mcg_status=0x7 mci_status=0xbd80000000000134 mci_misc=0x8c)
ao=$(count_lines compare.lines "vmm=qemu case=hugetlb " mcg_status=0x5 mci_status=0xbd000000000000c0 mci_misc=0x8c)
check qemu-hugetlb-values "qemu hugetlb: $ar events read back QEMU 7.2's Intel AR values, $ao its AO values, of $huge_events" \
	test $((ar + ao)) -eq "$huge_events"
check hugetlb-in-page "hugetlb: the page each VMM told its guest of, and the one poisoned, lie in the 2 MiB that was lost" \
	in_lost_page
check addr-is-gpa "every event's MCi_ADDR read back is the GPA its VMM named (the poisoned one; hugetlb: the page told)" \
	awk '/mci_addr=/ { for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } if (v["mci_addr"] != v["gpa"]) bad = 1 } END { exit bad }' compare.lines
