# The guest's own RAS tooling: a Debian stock kernel (it has tracing and the
# mce:mce_record and ras:memory_failure_event tracepoints) in hwlab-vmm, and
# Debian's rasdaemon in its initramfs (inner-initramfs-stock.cpio.gz)
# recording into its sqlite database. Each error hwlab-vmm injects is
# recorded as a real one would be: the mce (bank, status, address of the
# poisoned guest page) and the memory_failure event (pfn, page type,
# Recovered), read back from the database by the guest's init.
. /hwlab/scenarios/_lib.sh

# RAS_KERNEL_SUITE (trixie): whose stock kernel; the compare image carries
# them as /hwlab/data/stock/SUITE/ (scripts/stock-kernels.sh)
suite=${RAS_KERNEL_SUITE:-trixie}
stock=/hwlab/data/stock/$suite
LINUX_KERNEL=$stock/vmlinuz
LINUX_INITRD=/hwlab/data/inner-initramfs-stock.cpio.gz
if ! [ -f "$LINUX_KERNEL" ]; then
	skip rasdaemon "no $suite kernel: $(cat "$stock/unavailable" 2>/dev/null || echo "no $stock in this image")"
	finish
fi
echo "  kernel: $(cat "$stock/version" 2>/dev/null)"

# --- 1. late kill: the vCPU consumes the poison (AR) ----------------------
echo 0 >/proc/sys/vm/memory_failure_early_kill
start_linux late.log late.con "hwlab_inner.ras=1 hwlab_inner.pages=8"
echo "  $(grep -m 1 'INNER-BOOT' late.con)"
gpa=$(page_field late.con 2 gpa)
expect late-tool 0 "\"gpa\":\"$gpa\"" hwpoison-guest $vmm_pid "$gpa"
wait_console late.con 'INNER-EXIT tag=target'
ras_wait late.con
wait_console late.con 'INNER-ALIVE survivor=yes hardware_corrupted_kb=4'
stop_vmm late.log
show_console late.con
expect_count late-ar 1 late.log '"si_code":"BUS_MCEERR_AR"' "\"gpa\":\"$gpa\"" '"action":"inject"' \
	"\"mci_addr\":\"$gpa\""
ras_check late late late.con "$gpa" late.log

# --- 2. early kill: the outer kernel tells the VMM first (AO) --------------
# An AMD deferred error goes into its bank without a #MC; the guest's MCE
# poll (check_interval 1 s, init's, where a stock guest keeps 300 s) finds
# it, and the inner kernel's early kill signals the target before it reads
# the page again (it rereads every 30 s).
echo 1 >/proc/sys/vm/memory_failure_early_kill
start_linux early.log early.con \
	"hwlab_inner.ras=1 hwlab_inner.mode=early hwlab_inner.interval_ms=30000" --mce-kill early
gpa=$(page_field early.con 3 gpa)
expect early-tool 0 "\"gpa\":\"$gpa\"" hwpoison-guest $vmm_pid "$gpa"
wait_console early.con 'INNER-EXIT tag=target'
ras_wait early.con
wait_console early.con 'INNER-ALIVE survivor=yes hardware_corrupted_kb=4'
stop_vmm early.log
show_console early.con
expect_count early-ao 1 early.log '"si_code":"BUS_MCEERR_AO"' "\"gpa\":\"$gpa\"" '"action":"inject"' \
	"\"mci_addr\":\"$gpa\""
ras_check early-tuned-poll early early.con "$gpa" early.log
echo 0 >/proc/sys/vm/memory_failure_early_kill
finish
