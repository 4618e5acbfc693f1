# Kernel patch 0003: debugfs hwpoison/stats counts memory-failure outcomes
# by page type; a write clears it. Poison known kinds of pages and compare.
. /hwlab/scenarios/_lib.sh
stats=/sys/kernel/debug/hwpoison/stats
check stats-exists "$stats exists" test -e $stats
# stat TYPE COLUMN: column 2 Recovered, 3 Delayed, 4 Ignored, 5 Failed
stat() { awk -F '\t' -v t="$1" -v c="$2" '$1 == t { print $c }' $stats; }
total() { awk -F '\t' '!/^#/ { s += $2 + $3 + $4 + $5 } END { print s + 0 }' $stats; }

echo 1 >$stats
check stats-reset "a write clears every count (total $(total))" test "$(total)" -eq 0

echo 0 >/proc/sys/vm/memory_failure_early_kill
run_vmm anon.log --poison-gpa 0x500000 --poison-gpa 0x501000 --poison-gpa 0x502000 $GUEST
cat $stats | sed 's/^/  stats: /'
check stats-dirty-lru "3 anonymous guest pages: dirty LRU page Recovered 3 (got $(stat 'dirty LRU page' 2))" \
	test "$(stat 'dirty LRU page' 2)" -eq 3
check stats-only-those "nothing else counted (total $(total))" test "$(total)" -eq 3

echo 16 >/proc/sys/vm/nr_hugepages
run_vmm tlb.log --backing hugetlb --poison-gpa 0x523000 $GUEST
cat $stats | sed 's/^/  stats: /'
check stats-huge "a hugetlb guest page: huge page Recovered 1 (got $(stat 'huge page' 2))" \
	test "$(stat 'huge page' 2)" -eq 1

echo 1 >$stats
run_vmm pfn.log --poison-method corrupt-pfn --poison-gpa 0x600000 $GUEST
check stats-corrupt-pfn "corrupt-pfn on a guest page counts as dirty LRU too (got $(stat 'dirty LRU page' 2))" \
	test "$(stat 'dirty LRU page' 2)" -eq 1
check stats-failed-zero "no Failed outcome anywhere" \
	test "$(awk -F '\t' '!/^#/ { s += $5 } END { print s + 0 }' $stats)" -eq 0
finish
