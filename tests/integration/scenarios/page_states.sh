# Each kind of page memory_failure() handles, poisoned once (page_states
# helper: madvise(MADV_HWPOISON), or debugfs corrupt-pfn for pages no process
# maps): the kernel's "recovery action for <type>: <result>" line, the signal
# the process gets (si_code, si_addr, si_addr_lsb) or that it gets none,
# what is left of its data, HardwareCorrupted, and the counts of patch 0003
# (node sysfs memory_failure/ and debugfs hwpoison/stats), as differences.
# The expected table is docs/kernel.md "Page states", read from the 6.1
# source, not from a run.
. /hwlab/scenarios/_lib.sh
node=/sys/devices/system/node
stats=/sys/kernel/debug/hwpoison/stats

# --- block devices: ext2 on /dev/ram0 for page cache, swap on /dev/ram1 ---
check ext2-mkfs "mke2fs /dev/ram0" mke2fs -q /dev/ram0
mkdir -p /mnt
check ext2-mount "mount ext2 /dev/ram0 on /mnt" mount -t ext2 /dev/ram0 /mnt
check swap-on "mkswap + swapon /dev/ram1" sh -c 'mkswap /dev/ram1 && swapon /dev/ram1'
echo 8 >/proc/sys/vm/nr_hugepages
check hugetlb-pool "8 hugetlb pages ($(cat /proc/sys/vm/nr_hugepages))" \
	test "$(cat /proc/sys/vm/nr_hugepages)" -eq 8
check node-stats "$node/node0/memory_failure/ exists" test -r $node/node0/memory_failure/total

# nodesum FILE: FILE of memory_failure/ summed over the nodes
nodesum() { cat $node/node*/memory_failure/"$1" | awk '{ s += $1 } END { print s + 0 }'; }
# typecount TYPE RESULT: the hwpoison/stats count of TYPE with RESULT
typecount() {
	awk -F '\t' -v t="$1" -v r="$2" '
		/^#/ { for (i = 2; i <= NF; i++) col[$i] = i; next }
		$1 == t { print $col[r] }' $stats
}
lower() { echo "$1" | tr 'A-Z' 'a-z'; }

# pcase NAME CASE MODE TYPE RESULT SIG [FIELD=VALUE...]
#   runs page_states CASE MODE; TYPE/RESULT the kernel's line; SIG none, AO
#   or AR; each FIELD=VALUE (lsb, sigoff, data, child, extra words) must be
#   in the helper's line; poison=0 (madvise or the corrupt-pfn write
#   succeeded) unless a poison= field says otherwise
pcase() {
	name=$1 pc=$2 pm=$3 type=$4 result=$5 sig=$6
	shift 6
	case " $* " in *" poison="*) ;; *) set -- poison=0 "$@" ;; esac
	hc0=$(hardware_corrupted_kb) t0=$(nodesum total) r0=$(nodesum "$(lower "$result")")
	s0=$(typecount "$type" "$result")
	out=$(timeout -s KILL 60 page_states "$pc" "$pm" 2>&1)
	echo "  $out"
	line=$(printf '%s\n' "$out" | grep '^PAGESTATE ')
	check "$name-ran" "page_states $pc $pm reported (${line:+ok})" test -n "$line"
	pfn=$(printf '%s\n' "$line" | sed -n 's/.* pfn=\(0x[0-9a-f]*\) .*/\1/p')
	want="Memory failure: $pfn: recovery action for $type: $result"
	check "$name-dmesg" "'$want'" sh -c "dmesg | grep -qF '$want'"
	dmesg | grep -F "Memory failure: $pfn:" | sed 's/^/  dmesg: /'
	for f in "sig=$sig" "$@"; do
		case " $line " in
		*" $f "*) pass "$name-${f%%=*}" "$f" ;;
		*) fail "$name-${f%%=*}" "want $f in: $line" ;;
		esac
	done
	hc=$(( $(hardware_corrupted_kb) - hc0 ))
	check "$name-hwcorrupted" "HardwareCorrupted +4 kB (got +$hc)" test "$hc" -eq 4
	t=$(( $(nodesum total) - t0 )) r=$(( $(nodesum "$(lower "$result")") - r0 ))
	check "$name-sysfs" "memory_failure/total +1 (got +$t), /$(lower "$result") +1 (got +$r)" \
		test "$t" -eq 1 -a "$r" -eq 1
	s=$(( $(typecount "$type" "$result") - s0 ))
	check "$name-stats" "hwpoison/stats '$type' $result +1 (got +$s)" test "$s" -eq 1
}

# 4 KiB cases poison page 3 of an 8-page mapping and touch offset 0x10 in it
AR4="lsb=12 sigoff=0x3010" AO4="lsb=12 sigoff=0x3000"

# anonymous memory
pcase dirty-anon-late dirty_anon late "dirty LRU page" Recovered AR $AR4 data=ok
pcase dirty-anon-early dirty_anon early "dirty LRU page" Recovered AO $AO4 data=ok
pcase dirty-anon-child dirty_anon child "dirty LRU page" Recovered AR $AR4 data=ok child=sigbus
pcase dirty-anon-childearly dirty_anon childearly "dirty LRU page" Recovered AO $AO4 child=sigbus
pcase mlock-anon mlock_anon late "dirty LRU page" Recovered AR $AR4 data=ok
pcase mlock-anon-early mlock_anon early "dirty LRU page" Recovered AO $AO4 data=ok
pcase swapcache swapcache late "clean swapcache page" Recovered none data=ok child=exit0 extra=swapped_in=1
pcase swapcache-early swapcache early "clean swapcache page" Recovered none data=ok child=exit0 extra=swapped_in=1

# page cache: ext2 on brd, tmpfs, SysV shm
pcase clean-file-late clean_file late "clean LRU page" Recovered none data=ok extra=pread=ok fsync=ok
pcase clean-file-early clean_file early "clean LRU page" Recovered none data=ok extra=pread=ok
pcase file-hole file_hole late "clean LRU page" Recovered none data=ok extra=pread=ok
pcase file-hole-early file_hole early "clean LRU page" Recovered none data=ok extra=pread=ok
# the dirty page is dropped unwritten: read() gets what is on disk (a hole)
pcase dirty-file-late dirty_file late "dirty LRU page" Recovered AR $AR4 data=ok extra=pread=differs fsync=EIO
pcase dirty-file-early dirty_file early "dirty LRU page" Recovered AO $AO4 data=ok
pcase tmpfs tmpfs late "dirty LRU page" Recovered AR $AR4 data=ok extra=pread=EIO
pcase tmpfs-early tmpfs early "dirty LRU page" Recovered AO $AO4 data=ok extra=pread=EIO
pcase sysv-shm sysv_shm late "dirty LRU page" Recovered AR $AR4 data=ok
pcase sysv-shm-early sysv_shm early "dirty LRU page" Recovered AO $AO4 data=ok

# THP (split, then the 4 KiB page), hugetlb (the whole 2 MiB page)
pcase thp-head thp_head late "dirty LRU page" Recovered AR lsb=12 sigoff=0x10 data=ok extra=thp=1
pcase thp-tail thp_tail late "dirty LRU page" Recovered AR lsb=12 sigoff=0x5010 data=ok extra=thp=1
pcase thp-head-early thp_head early "dirty LRU page" Recovered AO lsb=12 sigoff=0x0 data=ok
pcase thp-tail-early thp_tail early "dirty LRU page" Recovered AO lsb=12 sigoff=0x5000 data=ok
pcase huge-head huge_head late "huge page" Recovered AR lsb=21 sigoff=0x10
pcase huge-head-early huge_head early "huge page" Recovered AO lsb=21 sigoff=0x0
pcase huge-tail huge_tail late "huge page" Recovered AR lsb=21 sigoff=0x5010
pcase huge-tail-early huge_tail early "huge page" Recovered AO lsb=21 sigoff=0x0

# pages no process maps (corrupt-pfn, pfn from /proc/kpageflags)
pcase free-huge free_huge late "free huge page" Recovered none
pcase free-buddy free_buddy late "free buddy page" Recovered none
# get_any_page() refuses them (-EIO, "unhandlable page."): memory_failure()
# reports unknown/Ignored and returns -EBUSY to the corrupt-pfn write
pcase slab slab late "unknown page" Ignored none poison=16
pcase reserved reserved late "unknown page" Ignored none poison=16
finish
