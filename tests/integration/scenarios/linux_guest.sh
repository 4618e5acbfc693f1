# The project's own Linux kernel as hwlab-vmm's guest (guest-linux/): poison
# from the outer kernel reaches the inner kernel's memory_failure(), which
# kills only the inner process that owns the page, and the guest runs on.
. /hwlab/scenarios/_lib.sh

# gpa_pfn GPA : the pfn as the inner kernel prints it ("0x19d6")
gpa_pfn() { printf '%#x' $(($1 >> 12)); }

# kernel patch 0007: KVM itself reports SUCCOR (bit 1) on an AMD host
# whatever the host CPU, and OVERFLOW_RECOV (bit 0) only as the host (here
# the outer vCPU) has it; hwlab-vmm adds both for an AMD guest either way (as
# QEMU does), so ask KVM directly
ras_want=0x2
grep -qw overflow_recov /proc/cpuinfo && ras_want=0x3
# (a host without it, e.g. Debian's stock kernels, reports 0: hwlab-vmm's
# guest recovers there all the same, QEMU's does not)
if need_host kvm-succor cpuid-succor-overflow-recov "KVM_GET_SUPPORTED_CPUID 0x80000007 EBX $ras_want"; then
	expect cpuid-succor-overflow-recov 0 "\"supported_cpuid_8000_0007_ebx\":\"$ras_want\"" hwlab-vmm --check
else
	expect cpuid-no-succor 0 '"supported_cpuid_8000_0007_ebx":"0"' hwlab-vmm --check
fi

# --- 1. late kill: the vCPU consumes the poison (AR) ----------------------
echo 0 >/proc/sys/vm/memory_failure_early_kill
# the console's input too: a line into the FIFO comes back as INNER-ECHO
mkfifo console.in
sleep 600 >console.in &
holder=$!
start_linux late.log late.con "hwlab_inner.pages=8" --console-in console.in
echo "hello from the outer VM" >console.in
wait_console late.con 'INNER-ECHO hello from the outer VM'
check late-console-in "a line sent to the guest's COM1 came back from its shell" \
	grep -q "$REC"'INNER-ECHO hello from the outer VM' late.con
va=$(page_field late.con 2 va)
gpa=$(page_field late.con 2 gpa)
pfn=$(gpa_pfn "$gpa")
expect late-tool 0 "\"gpa\":\"$gpa\"" hwpoison-guest $vmm_pid "$gpa"
wait_console late.con 'INNER-RESTART n=1'
wait_console late.con 'INNER-READY tag=target' 2
wait_console late.con 'INNER-ALIVE survivor=yes hardware_corrupted_kb=4'
stop_vmm late.log
show_console late.con
expect_count late-ar 1 late.log '"si_code":"BUS_MCEERR_AR"' "\"gpa\":\"$gpa\"" '"action":"inject"' \
	'"mci_status":"0xbc00080000000000"' '"mcg_status":"0x7"' "\"mci_addr\":\"$gpa\"" \
	'"mci_misc":"0x8c"' '"bank":9'
check late-mce-read "the guest read our bank 9 back: status bc00080000000000, ADDR $gpa" \
	sh -c "grep -q 'Machine Check Exception: 7 Bank 9: bc00080000000000' late.con &&
	       grep -q 'ADDR ${gpa#0x} MISC 8c' late.con"
check late-recovered "inner kernel: $pfn recovery action for dirty LRU page: Recovered" \
	grep -q "Memory failure: $pfn: recovery action for dirty LRU page: Recovered" late.con
check late-sigbus "inner target: SIGBUS BUS_MCEERR_AR at its page 2 ($va), lsb 12" \
	grep -q "${REC}INNER-SIGBUS tag=target .* code=BUS_MCEERR_AR addr=$va lsb=12 idx=2\$" late.con
check late-exit "inner target killed by it (exit 135), then restarted" \
	grep -q "$REC"'INNER-EXIT tag=target pid=[0-9]* status=135' late.con
check late-survivor "the other inner process lives, the guest counts 4 kB corrupted" \
	grep -q "$REC"'INNER-ALIVE survivor=yes hardware_corrupted_kb=4' late.con
check late-no-corrupt "no page read back wrong" sh -c '! grep -q INNER-CORRUPT late.con'
check late-no-panic "no oops, panic or warning in the guest" \
	sh -c '! grep -qE "Kernel panic|Oops|BUG:|WARNING:.*mce|Fatal" late.con'
expect_count late-stopped 1 late.log '"event":"vmm_exit"' '"status":"stopped"'
kill $holder 2>/dev/null

# --- 2. early kill: the outer kernel tells the VMM first (AO) --------------
# An AMD deferred error goes into its bank without a #MC; the guest's MCE
# poll (check_interval 1 s) finds it, and the inner kernel's early kill
# signals the target before it reads the page again (it rereads every 30 s).
echo 1 >/proc/sys/vm/memory_failure_early_kill
start_linux early.log early.con "hwlab_inner.mode=early hwlab_inner.interval_ms=30000" \
	--mce-kill early
va=$(page_field early.con 3 va)
gpa=$(page_field early.con 3 gpa)
pfn=$(gpa_pfn "$gpa")
expect early-tool 0 "\"gpa\":\"$gpa\"" hwpoison-guest $vmm_pid "$gpa"
wait_console early.con 'INNER-EXIT tag=target'
wait_console early.con 'INNER-ALIVE survivor=yes hardware_corrupted_kb=4'
stop_vmm early.log
show_console early.con
expect_count early-ao 1 early.log '"si_code":"BUS_MCEERR_AO"' "\"gpa\":\"$gpa\"" \
	'"action":"inject"' '"mci_status":"0x9c00180000000000"' "\"mci_addr\":\"$gpa\"" '"bank":8'
expect_count early-no-ar 0 early.log '"si_code":"BUS_MCEERR_AR"'
check early-recovered "inner kernel isolated $pfn from the deferred error: Recovered" \
	grep -q "Memory failure: $pfn: recovery action for dirty LRU page: Recovered" early.con
check early-sigbus "inner target: SIGBUS BUS_MCEERR_AO for page 3 ($va) before it read it" \
	grep -q "${REC}INNER-SIGBUS tag=target .* code=BUS_MCEERR_AO addr=$va lsb=12 idx=3\$" early.con
check early-survivor "the other inner process lives" \
	grep -q "$REC"'INNER-ALIVE survivor=yes hardware_corrupted_kb=4' early.con
check early-no-panic "no oops or panic in the guest" \
	sh -c '! grep -qE "Kernel panic|Oops|BUG:|Fatal" early.con'
echo 0 >/proc/sys/vm/memory_failure_early_kill

# --- 3. two vCPUs: each consumes a page; one page poisoned twice -----------
# The n-th target runs on CPU n mod 2, so the first target's page is
# consumed on vCPU 0 and the second's on vCPU 1 (an AP, started by SIPI).
start_linux smp.log smp.con "hwlab_inner.cpu=alternate" --vcpus 2
check smp-cpus "the guest brought up both vCPUs" grep -q "$REC"'INNER-BOOT .* cpus=2' smp.con
gpa0=$(page_field smp.con 1 gpa)
expect smp-tool-0 0 "\"gpa\":\"$gpa0\"" hwpoison-guest $vmm_pid "$gpa0"
wait_console smp.con 'INNER-READY tag=target' 2
# the same page again: already poisoned, the kernel sends nothing new
hwpoison-guest $vmm_pid "$gpa0" >smp.again 2>&1
echo "  second poison of $gpa0: exit $? $(cat smp.again)"
gpa1=$(page_field smp.con 4 gpa)
expect smp-tool-1 0 "\"gpa\":\"$gpa1\"" hwpoison-guest $vmm_pid "$gpa1"
wait_console smp.con 'INNER-READY tag=target' 3
wait_console smp.con 'INNER-ALIVE survivor=yes hardware_corrupted_kb=8'
stop_vmm smp.log
show_console smp.con
expect_count smp-ar-vcpu0 1 smp.log '"si_code":"BUS_MCEERR_AR"' "\"gpa\":\"$gpa0\"" \
	'"action":"inject"' '"vcpu":0'
expect_count smp-once 1 smp.log '"event":"sigbus"' "\"gpa\":\"$gpa0\"" '"action":"inject"'
expect_count smp-ar-vcpu1 1 smp.log '"si_code":"BUS_MCEERR_AR"' "\"gpa\":\"$gpa1\"" \
	'"action":"inject"' '"vcpu":1'
check smp-recovered "inner kernel recovered both pages" \
	test "$(grep -c 'recovery action for dirty LRU page: Recovered' smp.con)" -eq 2
check smp-survivor "the other inner process lives through both" \
	grep -q "$REC"'INNER-ALIVE survivor=yes hardware_corrupted_kb=8' smp.con
check smp-no-panic "no oops or panic in the guest" \
	sh -c '! grep -qE "Kernel panic|Oops|BUG:|Fatal" smp.con'
# AMD's #MC is local: QEMU's AMD support does not broadcast it, nor do we
expect_count smp-no-broadcast 1 smp.log '"event":"vmm_start"' '"mce_encoding":"amd"' \
	'"mca_broadcast":false'
expect_count smp-no-broadcast-sent 0 smp.log '"event":"mce_broadcast"'
finish
