# The memslot table's life, from the tool_safety scenario (sourced by it
# after _tool_safety.sh, and run as its last part: table_lifecycle): the VMM
# creates its table new, a killed VMM's stale table is refused and then
# removed by the next VMM, a reused pid cannot inherit a dead VMM's table,
# every exit removes the table, and the private directory must be a
# directory of root's alone. Uses the scenario's VMM, GUEST, t, pid (the
# live VMM) and memmap (its table).

table_lifecycle() {
	# the VMM creates its table new: never through a file or symlink already there
	: >"$t/pre"
	expect vmm-precreated 1 "$t/pre already exists" "$VMM" --passes 1 --memmap "$t/pre" "$GUEST"
	check vmm-precreated-kept "the file already there is left as it was" test -f "$t/pre" -a ! -s "$t/pre"
	ln -s "$t/target" "$t/planted"
	expect vmm-symlink 1 "$t/planted already exists" "$VMM" --passes 1 --memmap "$t/planted" "$GUEST"
	check vmm-symlink-not-followed "nothing created through the symlink" test ! -e "$t/target"

	# A VMM killed by SIGKILL leaves its table behind: nothing of it runs.
	start_ready "$t/killed.log" --passes 0 "$GUEST"
	killed_table=$(report_field "$t/killed.log" memmap)
	kill_reaped "$started"
	check stale-left "a SIGKILLed VMM leaves $killed_table behind" test -f "$killed_table"
	# That file, made to say all the live VMM's own table says (pid, start time,
	# slots; written in place, so still root's and 0600), speaks for nobody: the
	# live VMM does not hold it open.
	cat "$memmap" >"$killed_table"
	refused stale-table-as-live "is not open in pid $pid" --memmap "$killed_table" "$pid" 0x612000
	# The next VMM removes the stale tables of its private directory, and only those.
	start_ready "$t/next.log" --passes 0 "$GUEST"
	next=$started
	removed=$(report_value "$t/next.log" stale_tables_removed)
	check stale-removed "the next VMM removed $killed_table (stale_tables_removed: $removed)" \
		sh -c "[ ! -e '$killed_table' ] && [ '${removed:-0}' -ge 1 ]"
	check live-table-kept "the live VMM's $memmap is kept" test -f "$memmap"
	kill -TERM "$next"
	wait "$next"

	# The attack itself, only inside the outer VM (forcing a pid, through
	# ns_last_pid or pid_max, is not for the host): VMM A is SIGKILLed, B gets A's pid and
	# publishes its table elsewhere (--memmap), and A's table, back in place
	# with slots that fall inside B's RAM, must not make the tool poison B.
	if [ "$VMM" = hwlab-vmm ]; then
		start_ready "$t/a.log" --passes 0 "$GUEST"
		a=$started
		a_table=$(report_field "$t/a.log" memmap)
		kill_reaped "$a"
		cp -p "$a_table" "$t/a.memmap"
		# B must get A's pid (vmm_with_pid: sets b and tries)
		vmm_with_pid "$a" "$t/b.log" --passes 0 --memmap "$t/b.memmap" "$GUEST"
		if [ "$b" -ne "$a" ]; then
			skip pid-reuse "no new VMM got pid $a in $tries forks (last: $b)"
		else
			removed=$(report_value "$t/b.log" stale_tables_removed)
			check pid-reuse-cleaned "B (pid $b, --memmap) removed A's $a_table (stale_tables_removed: $removed)" \
				sh -c "[ ! -e '$a_table' ] && [ '${removed:-0}' -ge 1 ]"
			b_hva=$(slot0_hva "$t/b.memmap")
			# A's table as a VMM that cleans nothing would have left it
			sed "s/^0 \\([^ ]*\\) \\([^ ]*\\) [^ ]* /0 \\1 \\2 $b_hva /" "$t/a.memmap" >"$a_table"
			chmod 0600 "$a_table"
			refused pid-reuse-stale-start "now is a process that started at" "$b" 0x500000
			# and with B's start time forged into it: B does not hold it open
			sed -i "s/^\\(# pid [0-9]*\\) start .*/\\1 start $(start_time "$b")/" "$a_table"
			chmod 0600 "$a_table"
			refused pid-reuse-forged "is not open in pid $b" "$b" 0x500000
			rm -f "$a_table"
		fi
		kill -TERM "$b"
		wait "$b"
	fi

	# the table goes away at every exit
	kill -TERM "$pid"
	wait "$pid"
	rc=$?
	check sigterm-exit "VMM stopped by SIGTERM exits 0 (got $rc)" test "$rc" -eq 0
	check sigterm-removed "table removed after SIGTERM" test ! -e "$memmap"
	run_table "$t/normal.log" --passes 1 "$GUEST"
	check normal-exit "a finished guest: VMM exits 0 (got $rc)" test "$rc" -eq 0
	check normal-removed "table $table removed at the normal end" test -n "$table" -a ! -e "$table"
	run_table "$t/fail.log" --guest-fail-test "$GUEST"
	check error-exit "a failed guest: VMM exits 1 (got $rc)" test "$rc" -eq 1
	check error-removed "table $table removed at the error exit" test -n "$table" -a ! -e "$table"
	# The private directory: a symlink or a directory others may enter is
	# refused. Only inside the outer VM, which is thrown away after the run:
	# on the host, /run/hwlab-vmm is not this test's to move.
	if [ "$VMM" = hwlab-vmm ]; then
		dir=$(dirname "$memmap")
		mv "$dir" "$t/real-dir"
		ln -s "$t/real-dir" "$dir"
		expect vmm-dir-symlink 1 "$dir is not a directory (a symbolic link)" "$VMM" --passes 1 "$GUEST"
		rm "$dir"
		mv "$t/real-dir" "$dir"
		chmod 0755 "$dir"
		expect vmm-dir-mode 1 "$dir has mode 0755, not 0700" "$VMM" --passes 1 "$GUEST"
		chmod 0700 "$dir"
	fi
}
