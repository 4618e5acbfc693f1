# tests/host/vmm_runs.sh, issue #36: nothing outside the VMM holds it past a
# stop. For each kind of wait on something outside (an accept with no
# source, a source that stalls inside the stream header or after it, a
# connect to a listener whose backlog is full, a FIFO named for a path
# option, a destination that stops reading) a SIGTERM ends the VMM within
# 2 s, measured with a clock, with its memslot table removed; and the
# --incoming socket is removed in the directory it was made in, never
# through a path swapped meanwhile. Each test waits for the state it needs
# (a report line, the socket accepted, the peer ready), never for a time.
# Sourced by vmm_runs.sh after migrate.sh (/dev/kvm works): its helpers,
# vmm_bg, $vmm, $guest, $tmp, $logs, $all_output and $pfx.
# shellcheck shell=bash

peer=$here/tests/host/stall_peer.py
STOP_BOUND_MS=2000

ms_now() { echo $(($(date +%s%N) / 1000000)); }
# wait_until PID CMD...: until CMD is true or PID has ended; 60 s bound
wait_until() {
	local pid=$1 n=0
	shift
	while ! "$@" && [ -e "/proc/$pid" ] &&
		[ "$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -c1)" != Z ] && [ $n -lt 600 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	"$@"
}
gone() { [ ! -e "$1" ]; }
# connecting PID LOG: PID said it connects, or a thread of it waits in a
# Unix connect() (a listener that never accepts)
connecting() {
	grep -q '"event":"migrate_connect"' "$2" ||
		[[ $(cat /proc/"$1"/task/*/wchan 2>/dev/null) == *unix_wait_for_peer* ]]
}
# peer_start ARGS...: the stalling peer in the background (peer_pid)
peer_start() {
	python3 "$peer" "$@" &
	peer_pid=$!
}
peer_stop() {
	kill "$peer_pid" 2>/dev/null
	wait "$peer_pid" 2>/dev/null
}

# term_ends NAME PID TABLE LOG WANT_RC WHAT: a SIGTERM to PID ends it within
# STOP_BOUND_MS with exit WANT_RC and TABLE removed
term_ends() {
	local name=$1 pid=$2 table=$3 log=$4 want=$5 what=$6 t0 ms
	t0=$(ms_now)
	kill -TERM "$pid" 2>/dev/null
	ended_within "$pid" 10
	ms=$(($(ms_now) - t0))
	cat "$log" >>"$all_output"
	if [ "$end_rc" -eq "$want" ] && [ "$ms" -le "$STOP_BOUND_MS" ] && [ ! -e "$table" ]; then
		pass "$name" "$what: SIGTERM ended it in $ms ms, exit $end_rc, table removed"
	else
		fail "$name" "$what: SIGTERM: exit $end_rc after $ms ms (want $want within $STOP_BOUND_MS), table $([ -e "$table" ] && echo left behind || echo removed): $(tail_of "$log")"
	fi
	rm -f "$table"
}

# --- the destination: no source; a source that stalls in the header or after it
b=$tmp/bounds
mkdir -p "$b"
vmm_bg "$b/accept.log" --incoming "unix:$b/accept.sock" --memmap "$b/accept.memmap" "$guest"
if wait_file_has "$b/accept.log" '"status":"listening"' $bg_pid; then
	term_ends "${pfx}stop-in-accept" $bg_pid "$b/accept.memmap" "$b/accept.log" 1 \
		"--incoming with no source"
else
	ended_within $bg_pid 1
	fail "${pfx}stop-in-accept" "never listened: $(tail_of "$b/accept.log")"
fi

# (N1: the header was read before the socket's timeouts were set, the read
# restarted after the stop signal: 0 or 5 bytes held it for ever)
for sent in 0 5 16; do
	case $sent in
	16) name=stop-mid-stream what="a source that sent the header and stalls" ;;
	*) name=stop-in-header-$sent what="a source that stalls after $sent header bytes" ;;
	esac
	log=$b/$name.log sock=$b/$name.sock table=$b/$name.memmap
	vmm_bg "$log" --incoming "unix:$sock" --memmap "$table" "$guest"
	vmm_pid=$bg_pid
	if wait_file_has "$log" '"status":"listening"' $vmm_pid; then
		peer_start send "$sock" $sent "$b/$name.ready"
		# accepted: the VMM removes its socket file once it took the source
		if wait_until $vmm_pid test -e "$b/$name.ready" && wait_until $vmm_pid gone "$sock"; then
			term_ends "${pfx}$name" $vmm_pid "$table" "$log" 1 "$what"
		else
			ended_within $vmm_pid 1
			fail "${pfx}$name" "the source was not taken: $(tail_of "$log")"
		fi
		peer_stop
	else
		ended_within $vmm_pid 1
		fail "${pfx}$name" "never listened: $(tail_of "$log")"
	fi
	rm -f "$table"
done

# --- the source: a listener that never accepts, its backlog full (N2); a
# destination that takes the connection and never reads
# migrate_to_stalled NAME MODE WHAT COND...: a stall_peer.py of MODE at
# $b/MODE.sock, a VMM that migrates to it on SIGUSR2; once COND holds (it
# may read $vmm_pid and $log), a SIGTERM must end the VMM (term_ends)
migrate_to_stalled() {
	local name=$1 mode=$2 what=$3
	shift 3
	log=$b/$name.log
	peer_start "$mode" "$b/$mode.sock" "$b/$mode.ready"
	if ! wait_until $peer_pid test -e "$b/$mode.ready"; then
		fail "${pfx}$name" "the stalling peer ($mode) did not start"
		peer_stop
		return
	fi
	vmm_bg "$log" --passes 0 --migrate-to "unix:$b/$mode.sock" --memmap "$b/$name.memmap" "$guest"
	vmm_pid=$bg_pid
	wait_file_has "$log" '"event":"vmm_start"' $vmm_pid
	kill -USR2 $vmm_pid
	if wait_until $vmm_pid "$@"; then
		term_ends "${pfx}$name" $vmm_pid "$b/$name.memmap" "$log" 0 "$what"
	else
		ended_within $vmm_pid 1
		fail "${pfx}$name" "the migration never reached its wait: $(tail_of "$log")"
	fi
	peer_stop
}
# (the line says it is connecting; before it had one, the VMM sat in connect())
vmm_connecting() { connecting "$vmm_pid" "$log"; }
migrate_to_stalled stop-in-connect full "--migrate-to a listener that never accepts" vmm_connecting
migrate_to_stalled stop-in-send sink "--migrate-to a destination that never reads" \
	test -e "$b/sink.ready.accepted"

# --- a FIFO for a path option: refused at once, or waited on with a stop (N3:
# --restore blocked in open() for ever)
mkfifo "$b/fifo"
vmm_bg "$b/restore-fifo.log" --restore "$b/fifo" --memmap "$b/restore-fifo.memmap" "$guest"
vmm_pid=$bg_pid
wait_file_has "$b/restore-fifo.log" '"event":"vmm_start"' $vmm_pid
term_ends "${pfx}stop-restore-fifo" $vmm_pid "$b/restore-fifo.memmap" "$b/restore-fifo.log" 1 \
	"--restore naming a FIFO"
check "${pfx}restore-fifo-refused" "--restore FIFO: refused as not a regular file" \
	grep -q -- "--restore: $b/fifo is not a regular file" "$b/restore-fifo.log"
# the table itself: a FIFO there is not ours, refused without opening it
expect "${pfx}memmap-fifo" 1 "$b/fifo already exists" timed 10 --memmap "$b/fifo" "$guest"

# --- the private directory's lock held by another process: the VMM waits
# for it at start-up (5 s at most), and a stop ends that wait at once (the
# wait was 5 s whatever the stop: a flock() loop that never asked)
if [ "$(id -u)" = 0 ]; then
	priv=/run/hwlab-vmm
	mkdir -p -m 0700 "$priv"
	peer_start lock "$priv" "$b/lock.ready"
	if wait_until $peer_pid test -e "$b/lock.ready"; then
		vmm_bg "$b/lock.log" "$guest"
		vmm_pid=$bg_pid
		# waiting: its one thread sleeps between two tries of the lock
		if wait_until $vmm_pid grep -q nanosleep "/proc/$vmm_pid/wchan"; then
			term_ends "${pfx}stop-in-flock" $vmm_pid "$priv/$vmm_pid.memmap" "$b/lock.log" 1 \
				"the private directory locked by another process"
		else
			ended_within $vmm_pid 1
			fail "${pfx}stop-in-flock" "the VMM never waited for the lock: $(tail_of "$b/lock.log")"
		fi
	else
		fail "${pfx}stop-in-flock" "the lock holder did not start"
	fi
	peer_stop
else
	skip "${pfx}stop-in-flock" "the root VMM's private directory (/run/hwlab-vmm) needs root"
fi

# --- N4: the --incoming socket is removed in its own directory, and only
# while it is still the socket made: a directory symlink on its path swapped
# meanwhile once made a root VMM remove another directory's file and leave
# its own
mkdir -p "$b/n4/mine" "$b/n4/other"
ln -s mine "$b/n4/dir"
vmm_bg "$b/n4.log" --incoming "unix:$b/n4/dir/m.sock" --memmap "$b/n4.memmap" "$guest"
vmm_pid=$bg_pid
if wait_file_has "$b/n4.log" '"status":"listening"' $vmm_pid; then
	: >"$b/n4/other/m.sock"
	ln -s other "$b/n4/dir.new" && mv -T "$b/n4/dir.new" "$b/n4/dir"
	kill -TERM $vmm_pid
	ended_within $vmm_pid 10
	cat "$b/n4.log" >>"$all_output"
	check "${pfx}incoming-unlink-swapped-dir" "a swapped directory symlink: the other directory's m.sock is kept, the VMM's own socket removed" \
		sh -c "[ -f '$b/n4/other/m.sock' ] && [ ! -e '$b/n4/mine/m.sock' ]"
else
	ended_within $vmm_pid 1
	fail "${pfx}incoming-unlink-swapped-dir" "never listened: $(tail_of "$b/n4.log")"
fi
# a file put in place of the socket (same directory, same name) is not the VMM's to remove
vmm_bg "$b/n4b.log" --incoming "unix:$b/n4/mine/r.sock" --memmap "$b/n4b.memmap" "$guest"
vmm_pid=$bg_pid
if wait_file_has "$b/n4b.log" '"status":"listening"' $vmm_pid; then
	rm -f "$b/n4/mine/r.sock" && : >"$b/n4/mine/r.sock"
	kill -TERM $vmm_pid
	ended_within $vmm_pid 10
	cat "$b/n4b.log" >>"$all_output"
	check "${pfx}incoming-unlink-replaced" "a file put in place of the socket is kept" \
		test -f "$b/n4/mine/r.sock"
else
	ended_within $vmm_pid 1
	fail "${pfx}incoming-unlink-replaced" "never listened: $(tail_of "$b/n4b.log")"
fi
rm -f "$b"/*.memmap
