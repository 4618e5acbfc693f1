# The Linux guest where recovery cannot happen in the guest, and where the
# host page is bigger than the guest's: mce=off (a clear stop, or a reset
# onto fresh memory and a new boot), and hugetlb-backed guest RAM.
. /hwlab/scenarios/_lib.sh
echo 0 >/proc/sys/vm/memory_failure_early_kill

# --- 4a. mce=off: the guest cannot take a machine check: a clear stop -----
start_linux nomce.log nomce.con "mce=off"
gpa=$(page_field nomce.con 1 gpa)
expect nomce-tool 0 "\"gpa\":\"$gpa\"" hwpoison-guest $vmm_pid "$gpa"
wait "$vmm_pid"
vmm_rc=$?
sed 's/^/  vmm: /' nomce.log | grep -v io_ignored
show_console nomce.con
expect_count nomce-stop 1 nomce.log '"si_code":"BUS_MCEERR_AR"' "\"gpa\":\"$gpa\"" \
	'"action":"stop"' 'CR4.MCE clear'
check nomce-exit "the VMM exits 1 with a failed vmm_exit, not a triple fault" \
	sh -c "[ $vmm_rc -eq 1 ] && grep -q '\"event\":\"vmm_exit\",\"status\":\"fail\"' nomce.log"
check nomce-no-shutdown "no guest_fail for a triple fault" \
	sh -c "! grep -q 'triple fault' nomce.log"

# --- 4b. mce=off with --on-unrecoverable reset: a new boot, fresh memory ---
start_linux reset.log reset.con "mce=off" --on-unrecoverable reset
gpa=$(page_field reset.con 1 gpa)
expect reset-tool 0 "\"gpa\":\"$gpa\"" hwpoison-guest $vmm_pid "$gpa"
wait_console reset.con 'INNER-BOOT' 2
wait_console reset.con 'INNER-READY tag=target' 2
wait_console reset.con 'INNER-ALIVE survivor=yes' 1
stop_vmm reset.log
show_console reset.con
expect_count reset-action 1 reset.log '"si_code":"BUS_MCEERR_AR"' "\"gpa\":\"$gpa\"" \
	'"action":"reset"'
expect_count reset-remap 1 reset.log '"event":"remap"' "\"gpa\":\"$gpa\""
expect_count reset-boot2 1 reset.log '"event":"reset"' '"boot":2'
check reset-rebooted "the guest booted again and its target runs" \
	sh -c "[ \$(grep -c 'INNER-READY tag=target' reset.con) -ge 2 ]"
check reset-no-panic "no oops or panic in either boot" \
	sh -c '! grep -qE "Kernel panic|Oops|BUG:" reset.con'
expect_count reset-stopped 1 reset.log '"event":"vmm_exit"' '"status":"stopped"'

# --- 5. hugetlb guest RAM: lsb 21 from the outer kernel, 4 KiB for Linux --
# The outer kernel's AR names the whole 2 MiB page (si_addr_lsb 21, kernel
# patch 0001); a Linux guest ignores an MCi_MISC LSB above 12, so it gets
# the 4 KiB page it touched, and then the VMM tells it the other 511 pages
# of the lost 2 MiB, one deferred error each, for its MCE poll to find. The
# target keeps its pages in one guest THP, so that the lost 2 MiB is all its
# own: a guest-kernel page in there would be fatal at its first touch.
# What is not shown here: that the guest survives until all 511 are told;
# the THP's other pages are freed when the target dies, and a guest that
# reuses one before its poll hears of it consumes the poison in its kernel
# (docs/design.md, "A Linux guest on hugetlb RAM").
echo 64 >/proc/sys/vm/nr_hugepages
start_linux huge.log huge.con "hwlab_inner.thp=1 hwlab_inner.pages=512 hwlab_inner.restart=0" \
	--backing hugetlb
gpa=$(page_field huge.con 0 gpa)
va=$(page_field huge.con 0 va)
base=$(printf '%#x' $((gpa & ~0x1fffff)))
check huge-thp "the target's 512 pages are one 2 MiB-aligned guest THP ($gpa)" \
	test "$gpa" = "$base" -a "$(page_field huge.con 511 gpa)" = "$(printf '%#x' $((gpa + 0x1ff000)))"
poison=$(printf '%#x' $((gpa + 300 * 4096)))
expect huge-tool 0 "\"gpa\":\"$poison\"" hwpoison-guest $vmm_pid "$poison"
wait_console huge.con 'INNER-SIGBUS tag=target'
wait_for huge.log '"event":"poison_spread"' '"status":"telling"'
# a page the spread told: any other page of the extent the guest recovered
wait_console huge.con "Memory failure: 0x[23][0-9a-f][0-9a-f]: recovery action" 2
stop_vmm huge.log
show_console huge.con | grep -v 'INNER-PAGE' | tail -n 12
expect_count huge-ar 1 huge.log '"si_code":"BUS_MCEERR_AR"' "\"gpa\":\"$base\"" '"lsb":21' \
	'"pages":512' '"action":"inject"' "\"mci_addr\":\"$gpa\"" '"mci_misc":"0x8c"'
check huge-sigbus "inner target: SIGBUS BUS_MCEERR_AR at the page it read first ($va), lsb 12" \
	grep -q "INNER-SIGBUS tag=target .* code=BUS_MCEERR_AR addr=$va lsb=12 idx=0" huge.con
check huge-recovered "inner kernel: $(printf '%#x' $((gpa >> 12))) recovered" \
	grep -q "Memory failure: $(printf '%#x' $((gpa >> 12))): recovery action for .*: Recovered" huge.con
expect_count huge-spread 1 huge.log '"event":"poison_spread"' "\"gpa\":\"$base\"" '"pages":512' \
	'"status":"telling"'
check huge-told "the guest isolated another page of the lost 2 MiB that it never touched" \
	test "$(grep -c 'Memory failure: 0x[23][0-9a-f][0-9a-f]: recovery action' huge.con)" -ge 2
echo 0 >/proc/sys/vm/nr_hugepages
finish
