# tests/lib/scenario_table.sh: read tests/integration/scenarios.table (the
# format is described in its header), for outer-qemu/boot.sh and
# tests/run.sh, so that the format is parsed in one place. Bash, host side.
# Needs $here, the checkout's root.
scenario_table=$here/tests/integration/scenarios.table
scenario_dir=$here/tests/integration/scenarios
host_check_dir=$here/tests/host

# table_rows: "NAME WHERE GROUPS CPU IMAGE MEM APPEND TIMEOUT DESCRIPTION"
# (single blanks) for every row, host and outer, in table order; a malformed row or a duplicate name is reported on stderr
# (FILE:LINE:) and makes it fail, after printing the rows that were well
# formed.
table_rows() {
	[ -f "$scenario_table" ] || { echo "$scenario_table: no such file" >&2; return 1; }
	awk '
		/^[[:space:]]*(#|$)/ { next }
		function bad(why) {
			printf "%s:%d: %s: %s\n", FILENAME, FNR, why, $0 >"/dev/stderr"
			failed = 1
		}
		# the groups a row may name: the fixed ones, and (a host row after
		# the scenarios) an outer row listed above it
		function bad_group(groups,   n, g, i) {
			n = split(groups, g, ",")
			for (i = 1; i <= n; i++)
				if (g[i] !~ /^(default|measure|splat|upstream|host)$/ && !((g[i], "outer") in seen))
					return g[i] == "" ? "(empty)" : g[i]
			return ""
		}
		NF < 9 { bad("want NAME WHERE GROUPS CPU IMAGE MEM APPEND TIMEOUT DESCRIPTION"); next }
		$1 !~ /^[A-Za-z0-9_-]+$/ { bad("the name must be a script name without .sh"); next }
		$2 !~ /^(host|outer)$/ { bad("where must be host or outer"); next }
		$2 == "outer" && $1 ~ /^(default|measure|splat|upstream|host)$/ { bad("a scenario cannot be named like a group"); next }
		(g = bad_group($3)) != "" {
			bad("unknown group " g " (default, measure, splat, upstream, host, or a scenario listed above)"); next
		}
		$2 == "host" && ($4 $5 $6 $7 $8) != "-----" {
			bad("a host row has no outer VM: cpu, image, mem, append and timeout must be -"); next
		}
		$2 == "host" && $3 ~ /(^|,)(measure|upstream|host)(,|$)/ { bad("groups measure, upstream and host are for outer rows"); next }
		$2 == "outer" && $3 ~ /(^|,)splat(,|$)/ { bad("group splat is for host rows"); next }
		$2 == "outer" && $3 !~ /(^|,)(default|measure|upstream|host)(,|$)/ {
			bad("an outer row needs group default, measure, upstream or host"); next
		}
		$2 == "outer" && $5 !~ /^(base|compare|upstream)$/ { bad("the image must be base, compare or upstream"); next }
		$2 == "outer" && $6 !~ /^[1-9][0-9]*[MG]$/ { bad("the memory must be a number and M or G (qemu -m)"); next }
		$2 == "outer" && $7 !~ /^(-|[A-Za-z0-9_.=:\/][A-Za-z0-9_.=:\/,-]*)$/ {
			bad("append must be - or kernel arguments joined by commas"); next
		}
		$2 == "outer" && $8 !~ /^[1-9][0-9]*$/ { bad("the timeout must be a number of seconds"); next }
		seen[$1, $2]++ { bad($2 " row " $1 " is listed twice"); next }
		{
			desc = $0
			for (i = 1; i <= 8; i++)
				sub(/^[[:space:]]*[^[:space:]]+/, "", desc)
			sub(/^[[:space:]]+/, "", desc)
			print $1, $2, $3, $4, $5, $6, $7, $8, desc
		}
		END { exit failed }
	' "$scenario_table"
}

# scenario_rows: "NAME CPU IMAGE MEM APPEND TIMEOUT" for every outer row (a
# scenario), in table order; fails like table_rows on a malformed table
scenario_rows() {
	local rows rc
	rows=$(table_rows)
	rc=$?
	awk '$2 == "outer" { print $1, $4, $5, $6, $7, $8 }' <<<"$rows"
	return $rc
}
# scenario_row NAME: "CPU IMAGE MEM APPEND TIMEOUT" of NAME; fails, printing
# nothing, when the table does not list it (or is malformed: the reason goes
# to stderr)
scenario_row() {
	local rows
	rows=$(scenario_rows) || return 1
	awk -v name="$1" '$1 == name { print $2, $3, $4, $5, $6; found = 1 } END { exit !found }' <<<"$rows"
}

# scenario_table_mismatches: one line per scenario script the table does not
# list and per row without a script (a host row: tests/host/NAME.sh, but for
# unit, build/unit-tests); fails when there is any (or the table is
# malformed). tests/host/ also holds helpers no row names (kernel_splats.sh,
# which run.sh runs on each scenario's log with HWLAB_SPLAT_CHECK=1).
scenario_table_mismatches() {
	local rows name where f mismatch=0
	rows=$(table_rows) || return 1
	while read -r name where _; do
		[ "$where" = host ] && [ "$name" != unit ] || continue
		[ -f "$host_check_dir/$name.sh" ] && continue
		echo "tests/integration/scenarios.table lists host check $name, but there is no tests/host/$name.sh"
		mismatch=1
	done <<<"$rows"
	rows=$(scenario_rows) || return 1
	for f in "$scenario_dir"/[!_]*.sh; do
		[ -e "$f" ] || continue
		name=$(basename "$f" .sh)
		if ! awk -v name="$name" '$1 == name { found = 1 } END { exit !found }' <<<"$rows"; then
			echo "tests/integration/scenarios/$name.sh is not listed in tests/integration/scenarios.table"
			mismatch=1
		fi
	done
	while read -r name _; do
		[ -z "$name" ] || [ -f "$scenario_dir/$name.sh" ] && continue
		echo "tests/integration/scenarios.table lists $name, but there is no tests/integration/scenarios/$name.sh"
		mismatch=1
	done <<<"$rows"
	return $mismatch
}
