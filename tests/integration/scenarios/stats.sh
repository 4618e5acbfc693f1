# Kernel patches 0003-0006 (0003-0005 the upstream backport, 0006 the table): the per-node counts of /sys/devices/system/node/nodeN/
# memory_failure/ (the upstream design) and the by-page-type table of debugfs
# hwpoison/stats. Both are read-only since-boot records: every check takes
# the difference across the events it causes.
. /hwlab/scenarios/_lib.sh
# a host without it (Debian's stock kernels) skips the whole scenario, naming it
need_host mf-outcomes stats "per-node memory_failure counts and debugfs hwpoison/stats by page type" || finish
node=/sys/devices/system/node
stats=/sys/kernel/debug/hwpoison/stats
check stats-exists "$stats exists" test -e $stats
check node-stats-exist "$node/node0/memory_failure/{total,ignored,failed,delayed,recovered}" \
	sh -c "for f in total ignored failed delayed recovered; do test -r $node/node0/memory_failure/\$f || exit 1; done"
check stats-read-only "a write to $stats fails: there is no reset" sh -c "! (echo 1 >$stats) 2>/dev/null"
check sysfs-read-only "a write to memory_failure/total fails" \
	sh -c "! (echo 0 >$node/node0/memory_failure/total) 2>/dev/null"

# stat TYPE COLUMN: column 2 Recovered, 3 Delayed, 4 Ignored, 5 Failed
stat() { awk -F '\t' -v t="$1" -v c="$2" '$1 == t { print $c }' $stats; }
table_total() { awk -F '\t' '!/^#/ { s += $2 + $3 + $4 + $5 } END { print s + 0 }' $stats; }
nodesum() { cat $node/node*/memory_failure/"$1" | awk '{ s += $1 } END { print s + 0 }'; }
# snapshot: everything the checks compare, before the events
snapshot() {
	d0=$(stat 'dirty LRU page' 2) h0=$(stat 'huge page' 2) tt0=$(table_total)
	t0=$(nodesum total) r0=$(nodesum recovered) f0=$(nodesum failed) hc0=$(hardware_corrupted_kb)
}
snapshot
sum=$(( $(nodesum ignored) + $(nodesum failed) + $(nodesum delayed) + $(nodesum recovered) ))
check sysfs-adds-up "total = ignored + failed + delayed + recovered ($t0 = $sum)" test "$t0" -eq "$sum"
check table-adds-up "the stats table adds up to the nodes' total ($tt0 = $t0)" test "$tt0" -eq "$t0"

echo 0 >/proc/sys/vm/memory_failure_early_kill
run_vmm anon.log --poison-gpa 0x500000 --poison-gpa 0x501000 --poison-gpa 0x502000 $GUEST
cat $stats | sed 's/^/  stats: /'
d=$(( $(stat 'dirty LRU page' 2) - d0 )) tt=$(( $(table_total) - tt0 ))
t=$(( $(nodesum total) - t0 )) r=$(( $(nodesum recovered) - r0 )) hc=$(( $(hardware_corrupted_kb) - hc0 ))
check stats-dirty-lru "3 anonymous guest pages: dirty LRU page Recovered +3 (got +$d)" test "$d" -eq 3
check stats-only-those "nothing else counted in the table (+$tt)" test "$tt" -eq 3
check sysfs-total "memory_failure/total +3 (got +$t), recovered +3 (got +$r)" test "$t" -eq 3 -a "$r" -eq 3
check hwcorrupted "HardwareCorrupted +12 kB (got +$hc)" test "$hc" -eq 12

snapshot
echo 16 >/proc/sys/vm/nr_hugepages
run_vmm tlb.log --backing hugetlb --poison-gpa 0x523000 $GUEST
cat $stats | sed 's/^/  stats: /'
h=$(( $(stat 'huge page' 2) - h0 )) t=$(( $(nodesum total) - t0 ))
check stats-huge "a hugetlb guest page: huge page Recovered +1 (got +$h)" test "$h" -eq 1
check sysfs-huge "memory_failure/total +1 for it (got +$t)" test "$t" -eq 1

snapshot
run_vmm pfn.log --poison-method corrupt-pfn --poison-gpa 0x600000 $GUEST
d=$(( $(stat 'dirty LRU page' 2) - d0 )) t=$(( $(nodesum total) - t0 )) f=$(( $(nodesum failed) - f0 ))
check stats-corrupt-pfn "corrupt-pfn on a guest page counts as dirty LRU too (+$d)" test "$d" -eq 1
check sysfs-corrupt-pfn "and once in memory_failure/total (+$t)" test "$t" -eq 1
check stats-failed-zero "no Failed outcome among these events (+$f)" test "$f" -eq 0

# not counted (Documentation/mm/hwpoison.rst): a page already poisoned
snapshot
pfn=$(json-field pfn.log pfn event=poison_hook method=corrupt-pfn | head -n 1)
if [ -n "$pfn" ]; then
	echo "$pfn" >/sys/kernel/debug/hwpoison/corrupt-pfn 2>/dev/null
	t=$(( $(nodesum total) - t0 )) tt=$(( $(table_total) - tt0 )) hc=$(( $(hardware_corrupted_kb) - hc0 ))
	check already-poisoned "poisoning $pfn again counts nowhere (total +$t, table +$tt, HardwareCorrupted +$hc kB)" \
		test "$t" -eq 0 -a "$tt" -eq 0 -a "$hc" -eq 0
else
	skip already-poisoned "no pfn in the VMM's poison report"
fi
finish
