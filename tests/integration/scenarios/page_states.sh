# Each kind of page memory_failure() handles, poisoned once (page_states
# helper: madvise(MADV_HWPOISON), or debugfs corrupt-pfn for pages no process
# maps): the kernel's "recovery action for <type>: <result>" line, the signal
# the process gets (si_code, si_addr, si_addr_lsb) or that it gets none,
# what is left of its data, HardwareCorrupted, and the counts of patch 0003
# (node sysfs memory_failure/ and debugfs hwpoison/stats), as differences
# (pcase: _page_states.sh). The paths the seed had that this one leaves
# out are in seed_paths.
# The expected table is docs/kernel.md "Page states", read from the 6.1
# source, not from a run.
. /hwlab/scenarios/_lib.sh
. /hwlab/scenarios/_page_states.sh

# ext2 on /dev/ram0 for page cache, swap on /dev/ram1, 8 hugetlb pages
page_states_setup 8
# Since v6.11 madvise(MADV_HWPOISON) signals its caller itself (an AR at the
# page in either kill mode): there the helper poisons through corrupt-pfn,
# memory_failure() without MF_ACTION_REQUIRED, as madvise() was before, so
# each case's signal is the page state's, not the injector's
if host_has madvise-hwpoison-ar; then
	export HWLAB_PAGE_STATES_INJECT=corrupt-pfn
	echo "  page_states: injecting through corrupt-pfn (madvise-hwpoison-ar host)"
fi

# Where 6.12 and 7.2 differ from 6.1 (measured in their cells; the upstream
# commits between them not identified here): the AO for a hugetlb tail names
# the poisoned subpage, not the huge page's head, and a page
# get_hwpoison_page() refuses is "get hwpoison page", not "unknown page"
case $(uname -r) in
6.1.*) tail_ao=0x0 refused="unknown page" ;;
*) tail_ao=0x5000 refused="get hwpoison page" ;;
esac

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
pcase huge-tail-early huge_tail early "huge page" Recovered AO lsb=21 sigoff=$tail_ao

# pages no process maps (corrupt-pfn, pfn from /proc/kpageflags)
pcase free-huge free_huge late "free huge page" Recovered none
pcase free-buddy free_buddy late "free buddy page" Recovered none
# get_any_page() refuses them (-EIO, "unhandlable page."): memory_failure()
# reports them Ignored ($refused) and returns -EBUSY to the corrupt-pfn write
pcase slab slab late "$refused" Ignored none poison=EBUSY
pcase reserved reserved late "$refused" Ignored none poison=EBUSY
finish
