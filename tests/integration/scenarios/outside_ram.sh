# Poison in the VMM's own memory, outside guest RAM: an AO is reported and
# ignored; consuming it is a clear fatal report, never a hang or a silent exit.
. /hwlab/scenarios/_lib.sh

echo 1 >/proc/sys/vm/memory_failure_early_kill
run_vmm ao.log --mce-kill early --poison-vmm-heap $GUEST
check ao-vmm-exit-ok "AO outside RAM: VMM goes on and exits 0 (got $vmm_rc)" test "$vmm_rc" -eq 0
expect_count ao-ignored 1 ao.log '"si_code":"BUS_MCEERR_AO"' '"gpa":null' '"action":"ignore"' \
	'outside guest RAM'
expect_count ao-no-inject 0 ao.log '"action":"inject"'
expect_count ao-guest-done 1 ao.log '"event":"guest_done"' '"checksum_ok":true'

echo 0 >/proc/sys/vm/memory_failure_early_kill
run_vmm ar.log --poison-vmm-heap $GUEST
check ar-vmm-exit-3 "AR outside RAM: VMM exits 3 (got $vmm_rc)" test "$vmm_rc" -eq 3
expect_count ar-fatal 1 ar.log '"si_code":"BUS_MCEERR_AR"' '"gpa":null' '"action":"fatal"' \
	'the VMM consumed poisoned memory outside guest RAM'
# the fatal exit is _exit(3) from the SIGBUS handler: no atexit(), so the
# handler removes the memslot table itself
memmap=$(json-field ar.log memmap event=vmm_start)
check ar-table-removed "memslot table '$memmap' removed at the fatal exit" \
	test -n "$memmap" -a ! -e "$memmap"
finish
