# Guest RAM in a shmem memfd mapped shared (docs/host-behaviour.md):
# hwlab-vmm --backing shmem, as QEMU's memory-backend-memfd (what vhost-user
# devices need). memory_failure() unmaps a poisoned shmem page from every
# process but keeps it in the file (shmem_error_remove_folio() removes
# nothing): a read() of it gives EIO, a fault on it SIGBUS, until the file's
# page is punched out. So the VMM's reset must punch it (a fresh mapping of
# the same file offset would fault on the same poisoned page). Signals as
# for anonymous memory: an AO (lsb 12) to an early-kill VMM, KVM's AR (lsb
# 12) when the guest touches the page.
. /hwlab/scenarios/_lib.sh
. /hwlab/scenarios/_host.sh

# memfd_fd PID : the VMM's descriptor of its guest-RAM memfd
memfd_fd() { ls -l /proc/$1/fd 2>/dev/null | sed -n 's|.* \([0-9]*\) -> /memfd:hwlab-guest-ram.*|\1|p' | tail -n 1; }
# read_page PID GPA : read() that page of the memfd (through /proc/PID/fd);
# prints "ok" or dd's complaint, blanks as _
read_page() {
	rp_out=$(dd if=/proc/$1/fd/$(memfd_fd $1) of=/dev/null bs=4096 skip=$(($2 / 4096)) count=1 2>&1)
	if [ $? -eq 0 ]; then echo ok; else printf '%s\n' "$rp_out" | sed -n 's/.*: //p' | head -n 1 | tr ' ' _; fi
}
# a pass of the rebooted guest: a guest_pass line after its "boot":2 log line
boot2_pass() {
	awk '/"event":"guest_log".*"boot":2/ { b = 1 } b && /"event":"guest_pass"/ { f = 1; exit }
	     END { exit !f }' "$1"
}

gpa=0x523000
for mode in early late; do
	c=shmem-$mode
	if [ $mode = early ]; then ek=1 kill_opt="--mce-kill early"; else ek=0 kill_opt=; fi
	echo $ek >/proc/sys/vm/memory_failure_early_kill
	hc0=$(hardware_corrupted_kb)
	kmsg_mark $c
	# the VMM's own hook (corrupt-pfn at the end of pass 1), which holds the
	# guest until an AO is handled: the guest cannot touch the page first
	start_vmm $c.log --backing shmem --passes 0 $kill_opt --poison-gpa $gpa \
		--poison-method corrupt-pfn $GUEST
	pfn=$(json-field --live $c.log pfn event=poison_hook 2>/dev/null)
	inj=$([ "$(count_lines $c.log '"event":"poison_hook"' '"ok":true')" = 1 ] && echo ok || echo failed)
	check $c-injector "corrupt-pfn of the shmem page at $gpa (pfn ${pfn:-none}): $inj" test "$inj" = ok
	if [ $mode = early ]; then sig=BUS_MCEERR_AO; else sig=BUS_MCEERR_AR; fi
	wait_for $c.log "\"si_code\":\"$sig\""
	wait_for $c.log '"event":"guest_retired"'
	mf=$(mf_result $c "${pfn:-none}")
	check $c-mf "memory_failure(): dirty LRU page recovered (got $mf)" test "$mf" = dirty_LRU_page:Recovered
	rd=$(read_page $vmm_pid $gpa)
	check $c-kept-in-file "the poisoned page stays in the file: read() of it fails with EIO (got $rd)" \
		test "$rd" = Input/output_error
	guest_runs_on $c
	expect_count $c-signal 1 $c.log "\"si_code\":\"$sig\"" "\"gpa\":\"$gpa\"" '"lsb":12' '"pages":1' \
		'"action":"inject"'
	expect_count $c-retired 1 $c.log '"event":"guest_retired"' "\"gpa\":\"$gpa\"" '"pages":1' \
		'"matches_injection":true'
	check $c-hardware-corrupted "HardwareCorrupted grew by 4 kB, one page ($hc0 -> $hc1)" \
		test $((hc1 - hc0)) -eq 4
	behaviour shmem-$mode injector=$inj mf=$mf signal=$sig lsb=12 guest_told_pages=1 \
		read_after=$rd guest=$([ "$vmm_rc" -eq 0 ] && [ "${errors:-1}" -eq 0 ] && echo runs_on ||
			echo failed) hardware_corrupted_kb=$((hc1 - hc0))
done

# A guest that cannot take the machine check is reset: the VMM punches the
# poisoned page out of the file and maps it again; the rebooted guest
# writes and checks every page, that one too, without a fault.
echo 0 >/proc/sys/vm/memory_failure_early_kill
c=shmem-reset
start_vmm $c.log --backing shmem --passes 0 --guest-no-mce --on-unrecoverable reset $GUEST
check $c-memfd "the VMM's guest RAM is a memfd (fd $(memfd_fd $vmm_pid)), its page at 0x500000 readable ($(read_page $vmm_pid 0x500000))" \
	test "$(read_page $vmm_pid 0x500000)" = ok
# hwpoison-guest takes a page of the VMM's shmem memfd (mapped by it alone)
expect $c-poison 0 '"gpa":"0x500000"' hwpoison-guest $vmm_pid 0x500000
wait_for $c.log '"event":"reset"' '"boot":2'
n=0
while ! boot2_pass $c.log && kill -0 "$vmm_pid" 2>/dev/null && [ $n -lt $((1200 * HWLAB_TIME_FACTOR)) ]; do
	sleep 0.1
	n=$((n + 1))
done
rd=$(read_page $vmm_pid 0x500000)
check $c-punched "after the reset the file's page is a fresh one: read() of it works (got $rd)" test "$rd" = ok
stop_vmm $c.log
check $c-boot2-pass "the rebooted guest completed a pass over the page" boot2_pass $c.log
check $c-runs-on "the VMM ran on and stopped on SIGTERM (exit $vmm_rc)" test "$vmm_rc" -eq 0
expect_count $c-remap 1 $c.log '"event":"remap"' '"gpa":"0x500000"' '"bytes":4096'
expect_count $c-one-reset 1 $c.log '"event":"reset"'
expect_count $c-no-fatal 0 $c.log '"action":"fatal"'
behaviour shmem-reset remap=punched read_after=$rd resets=$(count_lines $c.log '"event":"reset"') \
	guest=$(boot2_pass $c.log && [ "$vmm_rc" -eq 0 ] && echo runs_on || echo failed)
finish
