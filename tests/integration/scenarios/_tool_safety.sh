# Helpers and fixtures of the tool_safety scenario, sourced by it (inside
# the outer VM, and on the host through tests/host/tool_safety.sh): not a
# scenario of its own (a leading "_": tests/lib/scenario_table.sh passes it
# over). They use the scenario's VMM, TOOL, GUEST, JSON_FIELD, t, fake,
# pfn_file and memmap.

# report_field LOG FIELD: a member of the vmm_start line (a string as it
# is), read while the VMM may still be writing (--live)
report_field() { "$JSON_FIELD" --live "$1" "$2" event=vmm_start; }
# report_value LOG FIELD: the same for a number or boolean (JSON's spelling)
report_value() { report_field "$@"; }
# proc_state PID: its state letter in /proc/PID/stat (T: stopped), empty once it is gone
proc_state() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1; }
# start_time PID: /proc/PID/stat field 22 (after the command name, which may hold blanks)
start_time() { sed 's/.*) //' "/proc/$1/stat" | cut -d' ' -f20; }
# refused NAME PATTERN ARGS...: the tool exits 1 with PATTERN and writes nothing
refused() {
	name=$1 pattern=$2
	shift 2
	: >"$pfn_file"
	expect "$name" 1 "$pattern" "$TOOL" --debugfs "$fake" "$@"
	check "$name-wrote-nothing" "$pfn_file left empty" test ! -s "$pfn_file"
}
# table_copy FILE SED_SCRIPT: the live table, edited, as a root-made 0600 file
table_copy() {
	sed "$2" "$memmap" >"$1"
	chmod 0600 "$1"
}
wait_ready() {
	n=0
	while ! grep -q '"event":"guest_pass"' "$1" && kill -0 "$2" 2>/dev/null && [ $n -lt 1200 ]; do
		sleep 0.1
		n=$((n + 1))
	done
}
# start_ready LOG ARGS...: a VMM in the background, its guest running (sets started)
start_ready() {
	log=$1
	shift
	"$VMM" "$@" >"$log" 2>&1 &
	started=$!
	wait_ready "$log" "$started"
}
# run_table LOG ARGS...: a VMM run to its end; sets rc and table (where it published it)
run_table() {
	log=$1
	shift
	"$VMM" "$@" >"$log" 2>&1
	rc=$?
	table=$(report_field "$log" memmap)
}
# kill_reaped PID: SIGKILL (nothing of the VMM runs: its table stays), and reap it
kill_reaped() {
	kill -KILL "$1"
	wait "$1" 2>/dev/null
}
# slot0_hva TABLE: the HVA of slot 0 in a memslot table
slot0_hva() { sed -n 's/^0 [^ ]* [^ ]* \(0x[0-9a-f]*\) .*/\1/p' "$1"; }
# tool_stopped_at_recheck LOG OUT: a VMM in the background (gone, its table
# gone_table) and the tool asked to poison its GPA 0x612000, stopped by its
# test hook with the injector open, right before its last checks (tool; at
# most 60 s to get there); the tool's output goes to OUT
tool_stopped_at_recheck() {
	start_ready "$1" --passes 0 "$GUEST"
	gone=$started
	gone_table=$(report_field "$1" memmap)
	: >"$pfn_file"
	HWPOISON_GUEST_TEST_STOP_BEFORE_RECHECK=1 "$TOOL" --debugfs "$fake" "$gone" 0x612000 \
		>"$2" 2>&1 &
	tool=$!
	n=0
	while [ "$(proc_state "$tool")" != T ] && kill -0 "$tool" 2>/dev/null && [ $n -lt 600 ]; do
		sleep 0.1
		n=$((n + 1))
	done
}

# vmm_private_mappings PID: NAME:ADDRESS of mappings that are writable and
# the VMM's alone, yet not guest RAM (ADDRESS empty where there is none):
# its data segment (a page-cache page of the binary), a vCPU's kvm_run (a
# kernel page), the static VMM's .bss (the anonymous mapping right after
# its data segment), its heap, a thread's stack (after its guard page)
vmm_private_mappings() {
	data=$(sed -n 's/^\([0-9a-f]*\)-[0-9a-f]* rw-p .*hwlab-vmm$/\1/p' "/proc/$1/maps" | head -n 1)
	kvm_run=$(sed -n 's/^\([0-9a-f]*\)-[0-9a-f]* rw-s .*kvm-vcpu.*/\1/p' "/proc/$1/maps" | head -n 1)
	bss=$(awk '$6 ~ /hwlab-vmm$/ && $2 == "rw-p" { split($1, r, "-"); end = r[2]; next }
		   end != "" { split($1, r, "-"); if (r[1] == end && $2 == "rw-p" && NF == 5) print r[1]; exit }' \
		"/proc/$1/maps")
	heap=$(sed -n 's/^\([0-9a-f]*\)-[0-9a-f]* rw-p .*\[heap\]$/\1/p' "/proc/$1/maps" | head -n 1)
	stack=$(awk '{ split($1, r, "-") }
		     $2 == "rw-p" && NF == 5 && r[1] == guard { print r[1]; exit }
		     { guard = $2 == "---p" ? r[2] : "" }' "/proc/$1/maps")
	echo "data:$data kvm_run:$kvm_run bss:$bss heap:$heap thread-stack:$stack"
}

# vmm_with_pid PID LOG ARGS...: a VMM in the background, its guest running,
# that got PID, a
# pid just freed (only inside the outer VM: forcing a pid is not for the
# host); sets b (its pid, PID if that worked) and tries. Through
# ns_last_pid where the kernel has it (CONFIG_CHECKPOINT_RESTORE; the outer
# kernel has not), else with pid_max just above PID, so that pids wrap
# below it, and short-lived forks until the last one took PID - 1.
vmm_with_pid() {
	vp_want=$1 vp_log=$2
	shift 2
	pid_max=$(cat /proc/sys/kernel/pid_max)
	[ -e /proc/sys/kernel/ns_last_pid ] || echo $((vp_want + 1)) >/proc/sys/kernel/pid_max
	tries=0
	while :; do
		if [ -e /proc/sys/kernel/ns_last_pid ]; then
			# a builtin echo and its redirection fork nothing
			echo $((vp_want - 1)) >/proc/sys/kernel/ns_last_pid
		else
			p=0
			while [ "$p" -ne $((vp_want - 1)) ] && [ $tries -lt 2000 ]; do
				( : ) &
				p=$!
				wait "$p"
				tries=$((tries + 1))
			done
		fi
		"$VMM" "$@" >"$vp_log" 2>&1 &
		b=$!
		[ "$b" -eq "$vp_want" ] || [ $tries -ge 2000 ] && break
		kill_reaped "$b"
		tries=$((tries + 1))
	done
	echo "$pid_max" >/proc/sys/kernel/pid_max
	wait_ready "$vp_log" "$b"
}
# thp_madvise, thp_restore: THP as our kernels set it (madvise) for a run,
# and back. In the outer VM only, never the host's setting: there, guest
# RAM comes in 4 KiB pages, so a page the guest never touched stays absent
# and khugepaged collapses nothing around it meanwhile. With THP "always"
# (Debian's stock kernels) every 2 MiB the guest touches is present whole.
THP=/sys/kernel/mm/transparent_hugepage/enabled
thp_was=
thp_madvise() {
	# (/hwlab/scenarios: the outer VM's image, as hugetlb_read.c asks)
	[ "$VMM" = hwlab-vmm ] && [ -e /hwlab/scenarios/_lib.sh ] && [ -w "$THP" ] || return 0
	thp_was=$(sed -n 's/.*\[\(.*\)\].*/\1/p' "$THP")
	echo madvise >"$THP"
}
thp_restore() { [ -z "$thp_was" ] || echo "$thp_was" >"$THP"; }
# first_absent_gpa PID HVA0: the first 2 MiB-aligned GPA of the 16 MiB guest
# whose page pagemap says is not present (nothing if none). Since 6.7
# (efa7df3e3bb5, "mm: align larger anonymous mappings on THP boundaries")
# guest RAM is THP-aligned: under THP "always" on sid all 8 of the guest's
# 2 MiB were present, GPA 0 and 0xc00000 among them.
first_absent_gpa() {
	local gpa
	for gpa in $(seq 0 $((2 << 20)) $(((16 << 20) - 1))); do
		if "$PAGEMAP_PFN" "$1" $(($2 + gpa)) 2>&1 | grep -q 'not present'; then
			printf '%#x\n' "$gpa"
			return
		fi
	done
}
