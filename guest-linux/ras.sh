# Sourced by the Linux guest's /init (guest-linux/init) for ras=1: the
# distro's rasdaemon, each row it stores printed as one INNER-RAS line
# through init's say. Kept apart from init by job; installed as
# /lib/hwlab/ras.sh by mkinitramfs.sh.
# --- rasdaemon (ras=1) ---------------------------------------------------
# Debian's rasdaemon as its service runs it (the environment of
# /etc/default/rasdaemon, rasdaemon -f -r): it reads the kernel's
# mce:mce_record and ras:memory_failure_event tracepoints and stores one row
# per event in /var/lib/rasdaemon/ras-mc_event.db. Each row it stores is
# printed from the database (not from its own output), one console line:
#   INNER-RAS ready rasdaemon=VERSION sqlite3=VERSION suite=SUITE pid=N events=GROUP:EVENT,...
#   INNER-RAS unavailable reason=TEXT (no rasdaemon here, a kernel without
#     the tracepoints: a test SKIPs)
#   INNER-RAS failed reason=TEXT (rasdaemon did not start: a test FAILs)
#   INNER-RAS mce id=N bank=N status=0x... addr=0x... misc=0x... mcgstatus=0x... cpu=N time="..."
#   INNER-RAS memory_failure id=N pfn=0x... type="PAGE TYPE" result=RESULT time="..."
#   INNER-RAS exited last="ITS LAST LINE"
#   INNER-RASD LINE: each line rasdaemon prints (its log, each event's text)
ras_db=/var/lib/rasdaemon/ras-mc_event.db
ras_log=/tmp/rasdaemon.log
# ras_db_ro: the database opened without taking any lock (immutable): a
# reader's shared lock makes rasdaemon's next insert fail with SQLITE_BUSY
# (it sets no busy timeout), and the row is lost (seen: "Failed to do
# memory_failure_event step on sqlite: error = 5" while init read the mce
# row). A read that overlaps a write may see it half done; the write's own
# "register inserted at db" brings another read after it.
ras_db_ro="file:$ras_db?immutable=1"
# ras_rows: the rows with ids above mce_last and mf_last, as console lines
ras_rows() {
	/usr/bin/sqlite3 -readonly "$ras_db_ro" <<EOF
SELECT printf('INNER-RAS mce id=%d bank=%d status=0x%x addr=0x%x misc=0x%x mcgstatus=0x%x cpu=%d time="%s"',
	id, bank, status, addr, misc, mcgstatus, cpu, timestamp)
	FROM mce_record WHERE id > $mce_last ORDER BY id;
SELECT printf('INNER-RAS memory_failure id=%d pfn=%s type="%s" result=%s time="%s"',
	id, pfn, page_type, action_result, timestamp)
	FROM memory_failure_event WHERE id > $mf_last ORDER BY id;
EOF
}
# ras_watch: rasdaemon's output, line by line, into $ras_log and on the
# console as INNER-RASD lines (what it says of each event, as a user's
# journal has it); after each row it stores ("register inserted at db") the
# new rows go to the console
ras_watch() {
	mce_last=0 mf_last=0
	while read -r line; do
		echo "$line" >>"$ras_log"
		say "INNER-RASD $line"
		case "$line" in
		*'register inserted at db'*) ;;
		*) continue ;;
		esac
		ras_rows >/tmp/ras.rows 2>&1
		while read -r row; do
			say "$row"
			id=${row#* id=}
			id=${id%% *}
			case "$row" in
			'INNER-RAS mce '*) mce_last=$id ;;
			'INNER-RAS memory_failure '*) mf_last=$id ;;
			*) say "INNER-RAS error query=\"$row\"" ;;
			esac
		done </tmp/ras.rows
	done
	# the pipe's end: rasdaemon is gone
	say "INNER-RAS exited last=\"$(tail -n 1 "$ras_log")\""
}
ras_unavailable() { say "INNER-RAS unavailable reason=$*"; }
# ras_tables: rasdaemon's database has both tables
ras_tables() {
	t=" $(echo $(/usr/bin/sqlite3 -readonly "$ras_db_ro" .tables 2>/dev/null)) "
	case "$t" in *' mce_record '*) ;; *) return 1 ;; esac
	case "$t" in *' memory_failure_event '*) ;; *) return 1 ;; esac
}
ras_start() {
	mkdir -p /tmp /sys/kernel/debug /sys/kernel/tracing
	mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
	mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
	if [ -f /etc/hwlab-ras-unavailable ]; then
		ras_unavailable "$(cat /etc/hwlab-ras-unavailable)"
		return
	fi
	if ! [ -x /usr/sbin/rasdaemon ] || ! [ -x /usr/bin/sqlite3 ]; then
		ras_unavailable "no rasdaemon/sqlite3 in this initramfs (inner-initramfs-stock.cpio.gz has them)"
		return
	fi
	for ev in mce/mce_record ras/memory_failure_event; do
		if ! [ -d "/sys/kernel/tracing/events/$ev" ]; then
			ras_unavailable "kernel $(uname -r) has no tracepoint ${ev%/*}:${ev#*/} (tracing, CONFIG_RAS)"
			return
		fi
	done
	mkdir -p /var/lib/rasdaemon
	rm -f /tmp/ras.fifo
	mkfifo /tmp/ras.fifo
	: >"$ras_log"
	ras_watch </tmp/ras.fifo &
	# as rasdaemon.service: EnvironmentFile=/etc/default/rasdaemon, rasdaemon -f -r
	(set -a; . /etc/default/rasdaemon; exec /usr/sbin/rasdaemon -f -r) >/tmp/ras.fifo 2>&1 &
	ras_pid=$!
	# ready: it listens (its trace pipes are open; it opens the database right
	# after saying so) and its database has both tables; bounded by its life
	# and 600 polls (the start is slow under nested TCG). -readonly: a query
	# never creates the file before rasdaemon does; immutable: nor does it
	# lock rasdaemon out of creating its tables.
	n=0
	until grep -q 'Listening to events' "$ras_log" && ras_tables; do
		if ! kill -0 $ras_pid 2>/dev/null || [ $n -ge 600 ]; then
			say "INNER-RAS failed reason=rasdaemon not listening after $n polls:" \
				"$(tail -n 3 "$ras_log" | tr '\n' ' ')"
			return
		fi
		sleep 0.1
		n=$((n + 1))
	done
	events=$(sed -n 's/.*Enabled event \([a-z_]*:[a-z_]*\).*/\1/p' "$ras_log" | tr '\n' ',')
	version() { sed -n "s/^$1=//p" /etc/hwlab-ras-versions; }
	say "INNER-RAS ready rasdaemon=$(version rasdaemon) sqlite3=$(version sqlite3)" \
		"suite=$(sed -n 's/^# Debian \([a-z]*\),.*/\1/p' /etc/hwlab-ras-versions) pid=$ras_pid" \
		"polls=$n events=${events%,}"
}
