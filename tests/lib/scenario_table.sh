# tests/lib/scenario_table.sh: read tests/integration/scenarios.table (the
# format is described in its header), for outer-qemu/boot.sh and
# tests/run.sh, so that the format is parsed in one place. Bash, host side.
# Needs $here, the checkout's root.
scenario_table=$here/tests/integration/scenarios.table
scenario_dir=$here/tests/integration/scenarios

# scenario_rows: "NAME CPU IMAGE MEM APPEND TIMEOUT" for every row, in table order; a
# malformed row or a duplicate name is reported on stderr (FILE:LINE:) and
# makes it fail, after printing the rows that were well formed.
scenario_rows() {
	[ -f "$scenario_table" ] || { echo "$scenario_table: no such file" >&2; return 1; }
	awk '
		/^[[:space:]]*(#|$)/ { next }
		function bad(why) {
			printf "%s:%d: %s: %s\n", FILENAME, FNR, why, $0 >"/dev/stderr"
			failed = 1
		}
		NF < 7 { bad("want NAME CPU IMAGE MEM APPEND TIMEOUT DESCRIPTION"); next }
		$1 !~ /^[A-Za-z0-9_-]+$/ { bad("the name must be a script name without .sh"); next }
		$3 !~ /^(base|compare)$/ { bad("the image must be base or compare"); next }
		$4 !~ /^[1-9][0-9]*[MG]$/ { bad("the memory must be a number and M or G (qemu -m)"); next }
		$5 !~ /^(-|[A-Za-z0-9_.=:\/][A-Za-z0-9_.=:\/,-]*)$/ {
			bad("append must be - or kernel arguments joined by commas"); next
		}
		$6 !~ /^[1-9][0-9]*$/ { bad("the timeout must be a number of seconds"); next }
		seen[$1]++ { bad("scenario " $1 " is listed twice"); next }
		{ print $1, $2, $3, $4, $5, $6 }
		END { exit failed }
	' "$scenario_table"
}

# scenario_row NAME: "CPU IMAGE MEM APPEND TIMEOUT" of NAME; fails, printing
# nothing, when the table does not list it (or is malformed: the reason goes
# to stderr)
scenario_row() {
	local rows
	rows=$(scenario_rows) || return 1
	awk -v name="$1" '$1 == name { print $2, $3, $4, $5, $6; found = 1 } END { exit !found }' <<<"$rows"
}

# scenario_table_mismatches: one line per script the table does not list and
# per row without a script; fails when there is any (or the table is malformed)
scenario_table_mismatches() {
	local rows name f mismatch=0
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
