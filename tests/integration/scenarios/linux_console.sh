# The Linux guest's console is not the report channel, and a console into a
# pipe nobody reads blocks neither a vCPU nor the monitor.
# Without --console the console goes to stderr, here a FIFO whose reader
# holds it open and never reads, and which is full before the VMM starts
# (filling 64 KiB through a nested guest's UART takes minutes under TCG):
# the guest's first console line meets a full pipe. Once the console was
# stdout: the guest could print lines that read as report lines, and a full
# pipe blocked the vCPU (and, with the console on stdout, the monitor) in
# pipe_write, so that SIGTERM did nothing. Waits for states (a thread of
# the VMM asleep in write(2) to fd 2: the console's writer), never for a time.
. /hwlab/scenarios/_lib.sh

# ended PID: PID has exited (a zombie, or gone); one read of its state
ended() {
	en_s=$(sed 's/.*) //' /proc/$1/stat 2>/dev/null | cut -c1)
	[ -z "$en_s" ] || [ "$en_s" = Z ]
}
# writing_blocked PID FD: how many threads of PID sleep inside write(2) to
# FD (the outer kernel has no kallsyms, so no wchan: /proc's syscall, state)
writing_blocked() {
	wb_n=0
	for wb_t in /proc/$1/task/*; do
		[ "$(cut -d' ' -f1,2 $wb_t/syscall 2>/dev/null)" = "1 0x$2" ] &&
			[ "$(sed 's/.*) //' $wb_t/stat 2>/dev/null | cut -c1)" = S ] && wb_n=$((wb_n + 1))
	done
	echo $wb_n
}
mkfifo flood.err
sleep 900 <flood.err &
unread=$!
# sixteen pages: a pipe's default capacity, so the pipe is full and dd done
timeout 60 dd if=/dev/zero of=flood.err bs=4096 count=16 2>/dev/null
timeout -s KILL 400 hwlab-vmm --kernel "$LINUX_KERNEL" --initrd "$LINUX_INITRD" \
	--append "$(linux_append)" >flood.log 2>flood.err &
vmm_pid=$!
# twice in a row: a write to a pipe with room sleeps for no poll's length
n=0 seen=0
while [ $seen -lt 2 ] && ! ended $vmm_pid && [ $n -lt 1800 ]; do
	if [ "$(writing_blocked $vmm_pid 2)" -ge 1 ]; then seen=$((seen + 1)); else seen=0; fi
	sleep 0.1
	n=$((n + 1))
	# a line now and then: boot.sh's silence watch takes a quiet VM for a frozen one
	[ $((n % 100)) -eq 0 ] && echo "  waiting: $n polls, $(grep -c . flood.log) report lines"
done
for t in /proc/$vmm_pid/task/*; do
	echo "  thread ${t##*/}: $(cut -d' ' -f1-3 $t/syscall 2>/dev/null)"
done
if [ $seen -ge 2 ]; then
	pass flood-console-full "the guest's console met its full, unread pipe after $n polls"
	check flood-vcpu-not-writing "one thread waits in write(2) to the console, the writer: no vCPU" \
		test "$(writing_blocked $vmm_pid 2)" -eq 1
	kill -TERM $vmm_pid
	n=0
	while ! ended $vmm_pid && [ $n -lt 300 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	ended $vmm_pid || kill -KILL $vmm_pid
	wait $vmm_pid
	vmm_rc=$?
	check flood-sigterm "SIGTERM ended the VMM in $n polls (bound 300): exit $vmm_rc, want 0" \
		test $vmm_rc -eq 0
else
	fail flood-console-full "no thread blocked on the console's pipe in $n polls"
	kill -KILL $vmm_pid 2>/dev/null
	wait $vmm_pid
fi
kill $unread 2>/dev/null
sed 's/^/  vmm: /' flood.log | cut -c1-300
check flood-table-removed "the memslot table is gone" test ! -e "$(memmap_of $vmm_pid)"
expect_count flood-stopped 1 flood.log '"event":"vmm_exit"' '"status":"stopped"'
check flood-report-only "stdout holds report lines only: no guest byte reached it" \
	sh -c "! grep -v '^{\"event\":\"' flood.log"
finish
