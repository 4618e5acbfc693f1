# Shared by the page_states and seed_paths scenarios (sourced after
# _lib.sh): the block devices and pools the page_states helper needs, the
# counts of patch 0003 (node sysfs memory_failure/ and debugfs
# hwpoison/stats) read as differences, pcase, which runs one helper case
# and asserts its outcome, and ucase, one unpoison (seed_paths). The
# expected outcomes are docs/kernel.md "Page states", read from the 6.1
# source, not from a run.
node=/sys/devices/system/node
stats=/sys/kernel/debug/hwpoison/stats

# page_states_setup NR_HUGEPAGES: ext2 on /dev/ram0 at /mnt (page cache),
# swap on /dev/ram1, the hugetlb pool
page_states_setup() {
	check ext2-mkfs "mke2fs /dev/ram0" mke2fs -q /dev/ram0
	mkdir -p /mnt
	check ext2-mount "mount ext2 /dev/ram0 on /mnt" mount -t ext2 /dev/ram0 /mnt
	check swap-on "mkswap + swapon /dev/ram1" sh -c 'mkswap /dev/ram1 && swapon /dev/ram1'
	echo "$1" >/proc/sys/vm/nr_hugepages
	check hugetlb-pool "$1 hugetlb pages ($(cat /proc/sys/vm/nr_hugepages))" \
		test "$(cat /proc/sys/vm/nr_hugepages)" -eq "$1"
	need_host mf-outcomes outcome-stats "hwpoison/stats counts by page type and outcome" || true
	need_host mf-stats node-stats "per-node memory_failure/ counts" &&
		check node-stats "$node/node0/memory_failure/ exists" test -r $node/node0/memory_failure/total
	# pcase marks where each case's kernel lines start by writing to
	# /dev/kmsg, which the kernel rate-limits (10 a burst) unless told not to
	echo on >/proc/sys/kernel/printk_devkmsg
	check devkmsg-on "kernel.printk_devkmsg = on, so no case mark is dropped" \
		grep -qx on /proc/sys/kernel/printk_devkmsg
}

# nodesum FILE: FILE of memory_failure/ summed over the nodes
nodesum() { cat $node/node*/memory_failure/"$1" 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'; }
# typecount TYPE RESULT: the hwpoison/stats count of TYPE with RESULT
typecount() {
	awk -F '\t' -v t="$1" -v r="$2" '
		/^#/ { for (i = 2; i <= NF; i++) col[$i] = i; next }
		$1 == t { print $col[r] }' $stats 2>/dev/null
}
# table_total: every count of hwpoison/stats
table_total() { awk -F '\t' '!/^#/ { s += $2 + $3 + $4 + $5 } END { print s + 0 }' $stats 2>/dev/null; }
lower() { echo "$1" | tr 'A-Z' 'a-z'; }

# want_words NAME LINE FIELD=VALUE... : a check NAME-FIELD for each, that
# it is a word of the helper's LINE
want_words() {
	ww_name=$1 ww_line=$2
	shift 2
	for f in "$@"; do
		case " $ww_line " in
		*" $f "*) pass "$ww_name-${f%%=*}" "$f" ;;
		*) fail "$ww_name-${f%%=*}" "want $f in: $ww_line" ;;
		esac
	done
}
# pcase NAME CASE MODE TYPE RESULT SIG [FIELD=VALUE...] [@OPTION...]
#   runs page_states CASE MODE; TYPE/RESULT the kernel's line
#   ("Memory failure: PFN: recovery action for TYPE: RESULT"); SIG none, AO
#   or AR; each FIELD=VALUE (lsb, sigoff, data, child, hwp, extra words)
#   must be in the helper's line; poison=0 (madvise or the corrupt-pfn
#   write succeeded) unless a poison= field says otherwise. By default
#   HardwareCorrupted grows by 4 kB and memory_failure/total, /RESULT and the
#   table's TYPE/RESULT cell by 1. Options:
#   @hc=N        HardwareCorrupted grows by N kB instead
#   @count=0     no memory_failure() outcome: total and the whole table
#                unchanged, and no "Memory failure: PFN:" line at all (a
#                page a filter rejects; soft offline). TYPE/RESULT: - -
#   @dmesg=TEXT  a kernel line that must be there too; %pfn in TEXT is
#                "Memory failure: PFN", %PFN the pfn alone (repeatable)
#   @cgroup=DIR  run the helper in that cgroup (v2)
#   @timeout=N   kill the helper after N s (default 60) times the time
#                factor (a bound, not a wait)
pcase() {
	name=$1 pc=$2 pm=$3 type=$4 result=$5 sig=$6
	shift 6
	want_hc=4 want_n=1 more_dmesg= cgroup= limit=60 fields=
	case " $* " in *" poison="*) ;; *) fields=poison=0 ;; esac
	for a in "$@"; do
		case $a in
		@hc=*) want_hc=${a#@hc=} ;;
		@count=*) want_n=${a#@count=} ;;
		@dmesg=*) more_dmesg="$more_dmesg${a#@dmesg=}
" ;;
		@cgroup=*) cgroup=${a#@cgroup=} ;;
		@timeout=*) limit=${a#@timeout=} ;;
		*) fields="$fields $a" ;;
		esac
	done
	# this case's kernel lines only: a pfn an earlier case poisoned and
	# unpoisoned may come back, and its old lines must not count here
	mark="hwlab-pcase $name $$.$(date +%s%N)"
	echo "$mark" >/dev/kmsg
	hc0=$(hardware_corrupted_kb) t0=$(nodesum total) tt0=$(table_total)
	[ "$want_n" -eq 0 ] || r0=$(nodesum "$(lower "$result")") s0=$(typecount "$type" "$result")
	if [ -n "$cgroup" ]; then
		out=$(timeout -s KILL "$(bound "$limit")" sh -c "echo \$\$ >$cgroup/cgroup.procs && exec page_states $pc $pm" 2>&1)
	else
		out=$(timeout -s KILL "$(bound "$limit")" page_states "$pc" "$pm" 2>&1)
	fi
	echo "  $out"
	line=$(printf '%s\n' "$out" | grep '^PAGESTATE ')
	check "$name-ran" "page_states $pc $pm reported (${line:+ok})" test -n "$line"
	pfn=$(printf '%s\n' "$line" | sed -n 's/.* pfn=\(0x[0-9a-f]*\) .*/\1/p')
	dmesg | awk -v m="$mark" 'seen; index($0, m) { seen = 1 }' >/tmp/pcase.dmesg
	grep -F "Memory failure: $pfn:" /tmp/pcase.dmesg | sed 's/^/  dmesg: /'
	if [ "$want_n" -eq 0 ]; then
		check "$name-dmesg" "no 'Memory failure: $pfn:' line" \
			sh -c "! grep -qF 'Memory failure: $pfn:' /tmp/pcase.dmesg"
	else
		want="Memory failure: $pfn: recovery action for $type: $result"
		check "$name-dmesg" "'$want'" grep -qF "$want" /tmp/pcase.dmesg
	fi
	if [ -n "$more_dmesg" ]; then
		printf '%s' "$more_dmesg" | sed "s/%pfn/Memory failure: $pfn/g; s/%PFN/$pfn/g" >/tmp/pcase.want
		while IFS= read -r d; do
			check "$name-dmesg-more" "'$d'" grep -qF -- "$d" /tmp/pcase.dmesg
		done </tmp/pcase.want
	fi
	# shellcheck disable=SC2086 # fields: FIELD=VALUE words
	want_words "$name" "$line" "sig=$sig" $fields
	hc=$(( $(hardware_corrupted_kb) - hc0 ))
	check "$name-hwcorrupted" "HardwareCorrupted +$want_hc kB (got +$hc)" test "$hc" -eq "$want_hc"
	t=$(( $(nodesum total) - t0 )) tt=$(( $(table_total) - tt0 ))
	# (each count only where the host has it: kernel/features; the skip
	# of the whole kind is said once, by page_states_setup and here)
	if ! host_has mf-stats; then :
	elif [ "$want_n" -eq 0 ]; then
		check "$name-sysfs" "memory_failure/total unchanged (got +$t)" test "$t" -eq 0
	else
		r=$(( $(nodesum "$(lower "$result")") - r0 ))
		check "$name-sysfs" "memory_failure/total +1 (got +$t), /$(lower "$result") +1 (got +$r)" \
			test "$t" -eq 1 -a "$r" -eq 1
	fi
	if ! host_has mf-outcomes; then :
	elif [ "$want_n" -eq 0 ]; then
		check "$name-stats" "hwpoison/stats unchanged (got +$tt)" test "$tt" -eq 0
	else
		s=$(( $(typecount "$type" "$result") - s0 ))
		check "$name-stats" "hwpoison/stats '$type' $result +1 (got +$s)" test "$s" -eq 1
	fi
}

# ucase NAME PFN RET HWP_AFTER HC_KB MESSAGE: page_states unpoison PFN; its
# errno, PG_hwpoison after, the HardwareCorrupted difference, and the
# kernel's "Unpoison: ... PFN" line (- : none for that pfn)
ucase() {
	name=$1 upfn=$2 uret=$3 uhwp=$4 uhc=$5 umsg=$6
	hc0=$(hardware_corrupted_kb)
	out=$(page_states unpoison "$upfn" 2>&1)
	echo "  $out"
	want_words "$name" "$out" ret=$uret hwp_after=$uhwp
	hc=$(( $(hardware_corrupted_kb) - hc0 ))
	check "$name-hwcorrupted" "HardwareCorrupted $uhc kB (got $hc)" test "$hc" -eq "$uhc"
	dmesg | grep -E "Unpoison: .* $upfn\$" | sed 's/^/  dmesg: /'
	if [ "$umsg" = - ]; then
		check "$name-dmesg" "no 'Unpoison:' line for $upfn" \
			sh -c "! dmesg | grep -qE 'Unpoison: .* $upfn\$'"
	else
		check "$name-dmesg" "'$umsg $upfn'" sh -c "dmesg | grep -qE '$umsg $upfn\$'"
	fi
}
