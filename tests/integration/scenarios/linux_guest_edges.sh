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

# --- a reboot the guest asks for is a reset, as many times as allowed ------
# reboot -f without ACPI: the keyboard controller's reset line (port 0x64,
# 0xfe). Three reboots are allowed; the fourth ends the run, said clearly.
start_linux reboot.log reboot.con "hwlab_inner.reboot_after=1"
n=0
while kill -0 "$vmm_pid" 2>/dev/null && [ $n -lt 1200 ]; do
	sleep 0.1
	n=$((n + 1))
done
wait "$vmm_pid"
vmm_rc=$?
grep -v io_ignored reboot.log | sed 's/^/  vmm: /'
expect_count reboot-asked 3 reboot.log '"event":"guest_reboot"' 'keyboard controller reset'
expect_count reboot-reset 3 reboot.log '"event":"reset"'
check reboot-booted "the guest came up four times" \
	test "$(grep -c 'INNER-BOOT' reboot.con)" -eq 4
expect_count reboot-limit 1 reboot.log '"event":"guest_fail"' 'more than the 3 allowed'
check reboot-exit "then the VMM exits 1 (got $vmm_rc)" test "$vmm_rc" -eq 1

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
# Whether the guest lived until a page it never touched came back from the
# spread is measured, not checked: it races with the guest reusing the
# freed pages of the target's THP (docs/design.md).
told=$(grep -c 'Memory failure: 0x[23][0-9a-f][0-9a-f]: recovery action' huge.con)
panicked=$(grep -c 'Kernel panic' huge.con)
echo "HWLAB-MEASURE hugetlb-spread pages_recovered=$told guest_panicked=$panicked"
echo 0 >/proc/sys/vm/nr_hugepages
finish
