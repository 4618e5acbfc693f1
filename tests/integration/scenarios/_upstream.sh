# Helpers of the upstream_mm scenario (sourced after _lib.sh): the outer
# kernel's base, the list of known failures, a test's setup (the needs
# column of tests/upstream/mm.list) and the reading of its kselftest TAP.
# busybox ash.

# upstream_base: 6.1, 6.12 or 7.2 from uname -r (6.1.192, 6.12.118+deb13-amd64,
# 7.2.13-amd64, ...): the major.minor, whatever follows
upstream_base() { uname -r | sed -n 's/^\([0-9]*\.[0-9]*\).*/\1/p'; }

# upstream_rows BASE: "SETDIR ID TIMEOUT NEEDS COMMAND..." for each row of
# tests/upstream/mm.list to run on BASE: those of BASE's own set, then those
# of a newer set marked BASE@NEWER (a backport's own upstream test)
upstream_rows() {
	local d own_done=
	for d in "/hwlab/data/selftests/$1" /hwlab/data/selftests/*; do
		[ -f "$d/list" ] || continue
		# (BASE's own set comes first, and only once)
		[ "$d" = "/hwlab/data/selftests/$1" ] && [ -n "${own_done:-}" ] && continue
		own_done=1
		awk -v base="$1" -v set="${d##*/}" -v dir="$d" '{
			n = split($2, b, ",")
			for (i = 1; i <= n; i++)
				if ((set == base && b[i] == base) || b[i] == base "@" set) {
					line = $0
					sub(/^[[:space:]]*[^[:space:]]+[[:space:]]+[^[:space:]]+[[:space:]]+/, "", line)
					print dir, $1, line
					break
				}
		}' "$d/list"
	done
}

# known_reason BASE NAME: the reason tests/upstream/mm.known gives for NAME
# (a test's id, or ID/SUBTEST) on BASE, if it lists it: its lines are
# "BASES PATTERN REASON...", BASES joined by commas or *, PATTERN a shell
# pattern (ksm-numa, uffd-unit-tests/*poison*)
known_reason() {
	[ -f "$UPSTREAM_KNOWN" ] || return 1
	local kb kpat kwhy
	while read -r kb kpat kwhy; do
		case $kb in '' | '#'*) continue ;; esac
		case ",$kb," in *",$1,"* | ',*,') ;; *) continue ;; esac
		# shellcheck disable=SC2254
		case $2 in $kpat) echo "$kwhy"; return 0 ;; esac
	done <"$UPSTREAM_KNOWN"
	return 1
}

# set_sysctl FILE VALUE: write VALUE, remembering the old one for
# undo_setup
set_sysctl() {
	echo "$1 $(cat "$1")" >>/tmp/upstream-sysctls
	echo "$2" >"$1"
}
# undo_setup: what setup_needs did, undone: the sysctls' old values, the
# swap device off, the ext2 mount gone
undo_setup() {
	[ -n "${swap_on:-}" ] && swapoff "$swap_on" && swap_on=
	[ "${run_dir:-}" = "$work/disk" ] && umount "$work/disk" && run_dir=$work
	[ -f /tmp/upstream-sysctls ] || return 0
	local f v
	# newest first, so that a file written twice gets its first value back
	sed -n '1!G;h;$p' /tmp/upstream-sysctls | while read -r f v; do
		echo "$v" >"$f"
	done
	rm -f /tmp/upstream-sysctls
}

# setup_needs NEEDS: the needs column's setup, before the test; sets
# run_as (a prefix for the command) and stress; fails, with setup_why,
# when the test cannot run here
setup_needs() {
	local n free
	run_as= stress= exitcount= run_dir=$work setup_why=
	for n in $(echo "$1" | tr ',' ' '); do
		case $n in
		-) ;;
		hugepages=*)
			set_sysctl /proc/sys/vm/nr_hugepages "${n#hugepages=}"
			free=$(sed -n 's/^HugePages_Free: *//p' /proc/meminfo)
			[ "$free" -ge "${n#hugepages=}" ] ||
				echo "  upstream: only $free of ${n#hugepages=} 2 MiB hugetlb pages could be reserved"
			;;
		gigantic=*)
			free=$(cat /sys/kernel/mm/hugepages/hugepages-1048576kB/free_hugepages 2>/dev/null || echo 0)
			if [ "$free" -lt "${n#gigantic=}" ]; then
				setup_why="needs ${n#gigantic=} free 1 GiB hugetlb pages (boot with hugepagesz=1G hugepages=${n#gigantic=} and the RAM for them), has $free; without them it exits 0 untested"
				return 1
			fi
			;;
		shm)
			set_sysctl /proc/sys/kernel/shmmax 268435456
			set_sysctl /proc/sys/kernel/shmall 4194304
			;;
		overcommit) set_sysctl /proc/sys/vm/overcommit_memory 1 ;;
		nobody) run_as="su nobody -s /bin/sh -c" ;;
		stress) stress=1 ;;
		exitcount) exitcount=1 ;;
		disk)
			# page cache of a disk file system (memory-failure's clean and
			# dirty page-cache cases skip on tmpfs): ext2 on brd's /dev/ram0
			mkdir -p "$work/disk"
			if mke2fs -q /dev/ram0 2>/dev/null && mount -t ext2 /dev/ram0 "$work/disk"; then
				chmod 1777 "$work/disk"
				run_dir=$work/disk
			else
				echo "  upstream: no ext2 on /dev/ram0; $work (tmpfs) instead"
			fi
			;;
		swap)
			# a RAM disk of brd (CONFIG_BLK_DEV_RAM, 32 MiB) as swap
			if ! grep -q '^/' /proc/swaps; then
				mkswap /dev/ram1 >/dev/null && swapon /dev/ram1 && swap_on=/dev/ram1 ||
					echo "  upstream: no swap on /dev/ram1"
			fi
			;;
		hwpoison)
			# a test may leave the memory-failure sysctls as it set them
			# (7.2's hugetlb-soft-offline ends with enable_soft_offline 0,
			# and memory-failure's soft-offline cases, run after it, then
			# failed): each is put back after the test, whatever it did
			for f in enable_soft_offline memory_failure_early_kill memory_failure_recovery; do
				[ -w /proc/sys/vm/$f ] && set_sysctl /proc/sys/vm/$f "$(cat /proc/sys/vm/$f)"
			done
			;;
		*)
			setup_why="unknown need '$n' in tests/upstream/mm.list"
			return 1
			;;
		esac
	done
	return 0
}

# tap_results LOG: "RESULT NAME REASON" for each TAP result line the test
# printed (and uffd-unit-tests' own result lines) ("ok 3 name", "not ok 4 name", "ok 5 name # SKIP why"), RESULT
# pass/fail/skip, NAME its description with blanks as _ (the check's name),
# REASON a SKIP's text. kselftest_harness's indented sub-results ("    ok 1
# ...") are not counted: their parent's line follows them.
tap_results() {
	awk '
		# uffd-unit-tests (6.12, 7.2) has its own: "Testing NAME... done",
		# "... skipped [reason: WHY]", "... failed [reason: WHY]"
		/^Testing .*\.\.\. (done|skipped|failed)/ {
			line = $0
			sub(/^Testing /, "", line)
			res = line
			sub(/\.\.\. .*/, "", line)
			sub(/.*\.\.\. /, "", res)
			why = res
			sub(/^[a-z]+ *(\[reason: *)?/, "", why); sub(/\]$/, "", why)
			res = (res ~ /^done/) ? "pass" : (res ~ /^skipped/) ? "skip" : "fail"
			gsub(/[^A-Za-z0-9_.:+=-]+/, "_", line)
			if (seen[line]++) line = line "-" NR
			print res, line, why
			next
		}
		/^(not )?ok [0-9]+( |$)/ {
			res = ($1 == "not") ? "fail" : "pass"
			line = $0
			num = (res == "fail") ? $3 : $2
			sub(/^(not )?ok [0-9]+ ?/, "", line)
			why = ""
			if (match(line, / *# *SKIP/)) {
				why = substr(line, RSTART + RLENGTH)
				line = substr(line, 1, RSTART - 1)
				res = (res == "fail") ? "fail" : "skip"
			} else if (match(line, / *# *(XFAIL|TODO)/)) {
				why = substr(line, RSTART)
				line = substr(line, 1, RSTART - 1)
			}
			sub(/^ +/, "", why)
			# "ok 3 # XFAIL text", "ok 2 # SKIP text": named by the text
			if (line ~ /^ *$/) line = why
			gsub(/[^A-Za-z0-9_.:+=-]+/, "_", line)
			sub(/^_+/, "", line); sub(/_+$/, "", line)
			if (line == "") line = "test" num
			line = substr(line, 1, 80)
			# a name printed twice (madv_populate) gets its number
			if (seen[line]++) line = line "-" num
			print res, line, why
		}' "$1"
}

# show_output LOG: the test's output on the console, "  | " before each
# line, at most 400 lines (the first 300 and the last 100)
show_output() {
	local n
	n=$(wc -l <"$1")
	if [ "$n" -le 400 ]; then
		sed 's/^/  | /' "$1"
	else
		sed -n '1,300s/^/  | /p' "$1"
		echo "  | ... $((n - 400)) lines left out ..."
		tail -n 100 "$1" | sed 's/^/  | /'
	fi
}
