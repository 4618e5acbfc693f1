# The paths of the 2009 HWPOISON seed that page_states leaves out (issue
# #20): dirty swap cache (the one Delayed outcome 6.1 can reach),
# unevictable pages (ramfs, SHM_LOCK), file-backed hugetlb, KSM, every
# corrupt-filter-* file, soft offline, unpoison and its refusals,
# find_early_kill_thread(), PR_MCE_KILL_CLEAR/GET and the SIGKILL of
# kill_procs() when the unmap fails. Each case (page_states helper, pcase in
# _page_states.sh) asserts the kernel's line, the signal or its absence, and
# which count moves: HardwareCorrupted, node sysfs memory_failure/ and
# debugfs hwpoison/stats, as differences. The expectations, with the 6.1
# functions that give them, are in docs/kernel.md "Page states" and in the
# helper's comments; they were read from the source, not from a run.
. /hwlab/scenarios/_lib.sh
. /hwlab/scenarios/_page_states.sh
hw=/sys/kernel/debug/hwpoison
early_kill=/proc/sys/vm/memory_failure_early_kill

page_states_setup 16
mkdir -p /ramfs /hugetlbfs
check ramfs-mount "mount ramfs on /ramfs" mount -t ramfs ramfs /ramfs
check hugetlbfs-mount "mount hugetlbfs on /hugetlbfs" mount -t hugetlbfs hugetlbfs /hugetlbfs
echo 0 >$early_kill

# 4 KiB cases poison page 3 of an 8-page mapping and touch offset 0x10 in it
AR4="lsb=12 sigoff=0x3010" AO4="lsb=12 sigoff=0x3000"

# --- dirty swap cache: Delayed ----------------------------------------------
# An anonymous page swapped out, read back into the swap cache by
# MADV_WILLNEED, mapped by a read fault (exclusive) and written: in the swap
# cache with a dirty PTE. hwpoison_user_mappings() keeps it in the swap cache
# (TTU_HWPOISON cleared: the PTE becomes its swap entry again) and
# try_to_unmap_one() moves the dirty bit to PG_dirty, so forcekill; the
# "dirty swapcache page" row's me_swapcache_dirty() clears dirty and
# uptodate, takes it off the LRU and leaves it in the swap cache: Delayed
# (the kill is left to do_swap_page(), which finds PG_hwpoison in the swap
# cache: VM_FAULT_HWPOISON, an AR on access).
pcase dirty-swapcache dirty_swapcache late "dirty swapcache page" Delayed AR $AR4 data=ok \
	extra=swapcache=1 "@dmesg=%pfn: keeping poisoned page in swap cache"
pcase dirty-swapcache-early dirty_swapcache early "dirty swapcache page" Delayed AO $AO4 data=ok \
	extra=swapcache=1

# --- unevictable pages ----------------------------------------------------
# ramfs: unevictable (mapping_set_unevictable()), written through a shared
# mapping: PG_dirty (noop_dirty_folio()). me_pagecache_dirty() →
# truncate_error_page(): ram_aops has no error_remove_page, and
# invalidate_inode_page() refuses a dirty page ("Failed to invalidate"), so
# the page stays in the page cache, still referenced: Failed, and madvise()
# returns EBUSY. read() still returns its bytes (filemap_read() does not
# look at PG_hwpoison), fsync() is noop_fsync().
pcase ramfs ramfs late "dirty unevictable LRU page" Failed AR $AR4 poison=EBUSY data=ok \
	extra=pread=ok fsync=ok "@dmesg=%pfn: Failed to invalidate" \
	"@dmesg=%pfn: dirty unevictable LRU page still referenced by 1 users"
pcase ramfs-early ramfs early "dirty unevictable LRU page" Failed AO $AO4 poison=EBUSY data=ok
# a clean ramfs page (a hole read through the mapping): ramfs cannot write
# back (noop_backing_dev_info), so TTU_HWPOISON stays and the PTE becomes a
# hwpoison entry, but not dirty means no kill: no AO even with early kill,
# an AR at the next access; me_pagecache_clean() invalidates it: Recovered
pcase ramfs-clean ramfs_clean late "clean unevictable LRU page" Recovered AR $AR4 data=ok \
	extra=pread=ok fsync=ok
pcase ramfs-clean-early ramfs_clean early "clean unevictable LRU page" Recovered AR $AR4 data=ok
# SysV shm after SHM_LOCK: shmem pages on the unevictable LRU; shmem keeps
# the page in the page cache (shmem_error_remove_page(), extra_pins):
# Recovered
pcase shm-locked shm_locked late "dirty unevictable LRU page" Recovered AR $AR4 data=ok extra=locked=1
pcase shm-locked-early shm_locked early "dirty unevictable LRU page" Recovered AO $AO4 data=ok \
	extra=locked=1

# --- file-backed hugetlb: a shared mapping of a hugetlbfs file --------------
# hwpoison_user_mappings() unmaps it under hugetlb_page_mapping_lock_write()
# (PG_dirty: hugetlb_add_to_page_cache() marks it dirty, so forcekill);
# me_huge_page() truncates it from the file (hugetlbfs_error_remove_page()
# keeps it in the page cache): Recovered. The AO is for the huge page
# (add_to_kill(): the head's address, lsb 21); a new mapping of the file
# faults on the page still in the cache (hugetlb_no_page(): SIGBUS, lsb 21).
pcase hugefile-head hugefile_head late "huge page" Recovered AR lsb=21 sigoff=0x10 \
	extra=remap=sigbus remap_sig=AR remap_lsb=21
pcase hugefile-tail-early hugefile_tail early "huge page" Recovered AO lsb=21 sigoff=0x0 \
	extra=remap=sigbus remap_sig=AR remap_lsb=21
pcase hugefile-child hugefile_head child "huge page" Recovered AR lsb=21 sigoff=0x10 child=sigbus \
	extra=remap=sigbus

# --- KSM: a page merged between two processes -------------------------------
# hwpoison_user_mappings() refuses PageKsm before collecting anyone: "can't
# handle KSM pages.", "unmapping failed page: Ignored", madvise() EBUSY; no
# signal to either mapper, early or late, and both still read the page.
ksm=/sys/kernel/mm/ksm
if [ ! -d $ksm ]; then
	fail ksm-sysfs "no $ksm: the kernel lacks CONFIG_KSM"
else
	echo 1000 >$ksm/pages_to_scan
	echo 10 >$ksm/sleep_millisecs
	echo 1 >$ksm/run
	pcase ksm ksm late "unmapping failed page" Ignored none poison=EBUSY data=ok child=exit0 hwp=1 \
		extra=ksm=1 "@dmesg=%pfn: can't handle KSM pages." @timeout=240
	pcase ksm-early ksm early "unmapping failed page" Ignored none poison=EBUSY data=ok child=exit0 \
		hwp=1 extra=ksm=1 @timeout=240
	echo 0 >$ksm/run
fi

# --- soft offline: madvise(MADV_SOFT_OFFLINE) -------------------------------
# soft_offline_page() migrates the page (a THP is split first; a hugetlb
# page moves whole) and page_handle_poison() poisons the old one: a new pfn,
# the data intact, no signal, HardwareCorrupted +4 kB, and no
# action_result(): no "Memory failure:" line and no count in memory_failure/
# or hwpoison/stats. The only line is madvise_inject_error()'s.
soft() {
	sname=$1
	shift
	pcase "$sname" "$@" "@dmesg=Soft offlining pfn %PFN at process virtual address"
}
soft soft-anon soft_anon late - - none @count=0 data=ok hwp=1 extra=moved=1 oldhwp=1 newhwp=0
soft soft-thp soft_thp late - - none @count=0 data=ok hwp=1 extra=thp=1 moved=1 oldhwp=1 newhwp=0
soft soft-huge soft_huge late - - none @count=0 data=ok hwp=1 extra=moved=1 oldhwp=1 newhwp=0

# --- unpoison (debugfs unpoison-pfn) and its refusals ----------------------
# (ucase, in _page_states.sh: page_states unpoison PFN and its outcome)
# a free buddy page taken off by memory_failure() (take_page_off_buddy())
# goes back: __get_unpoison_page() sees PageHWPoisonTakenOff,
# put_page_back_buddy() frees it
pcase unpoison-buddy-poisoned free_buddy late "free buddy page" Recovered none hwp=1
ucase unpoison-buddy "$pfn" 0 0 -4 "Unpoison: Software-unpoisoned page"
# a hugetlb page in a hugetlbfs file: refused while the page cache holds it,
# unpoisoned (back in the pool) once the file no longer does; the poison's
# +4 kB and the unpoison's -4 kB
pcase unpoison-hugefile unpoison_hugefile late "huge page" Recovered none @hc=0 \
	extra=busy=EBUSY unpoison=0 hwp_after=0 pool=+1 \
	"@dmesg=Unpoison: Someone grabs the hwpoison page %PFN" \
	"@dmesg=Unpoison: Software-unpoisoned page %PFN"
# refusals: a page never poisoned; the huge zero page (checked first)
pcase unpoison-clean unpoison_clean late - - none @count=0 @hc=0 hwp=0 extra=unpoison=EBUSY \
	"@dmesg=Unpoison: Page was already unpoisoned %PFN"
pcase unpoison-hzp unpoison_hzp late - - none @count=0 @hc=0 hwp=0 extra=hzp=1 unpoison=EOPNOTSUPP \
	"@dmesg=Unpoison: huge zero page is not supported %PFN"
# a poisoned reserved page: memory_failure() left PG_hwpoison on it
# (Ignored); unpoison_memory() refuses PageReserved without a message
pcase unpoison-reserved-poisoned reserved late "unknown page" Ignored none poison=EBUSY hwp=1
ucase unpoison-reserved "$pfn" EBUSY 1 0 -
# a pfn that is no online memory: pfn_to_online_page() NULL, -EIO
ucase unpoison-offline 0x10000000000 EIO 0 0 -

# --- find_early_kill_thread(): the AO goes to the thread that asked --------
# the main thread never calls PR_MCE_KILL, a second thread sets EARLY: with
# the sysctl 0 the second thread gets the AO; with 1 the main thread, the
# first without PF_MCE_PROCESS
echo 0 >$early_kill
pcase mce-thread mce_thread late "dirty LRU page" Recovered AO $AO4 data=ok extra=sigto=thread sysctl=0
echo 1 >$early_kill
pcase mce-thread-sysctl mce_thread late "dirty LRU page" Recovered AO $AO4 data=ok \
	extra=sigto=main sysctl=1
echo 0 >$early_kill

# --- PR_MCE_KILL_CLEAR and PR_MCE_KILL_GET ---------------------------------
# GET after each SET; an invalid SET fails yet leaves a policy (kernel/sys.c
# sets PF_MCE_PROCESS before it checks the argument); after SET EARLY and
# CLEAR the process follows vm.memory_failure_early_kill again: late with 0
# (AR on access), early with 1 (AO)
MCE_GET="get=default set_early=early set_late=late set_default=default bad_set=EINVAL after_bad=late bad_clear=EINVAL bad_get=EINVAL cleared=default"
pcase mce-clear mce_clear late "dirty LRU page" Recovered AR $AR4 data=ok extra=$MCE_GET
echo 1 >$early_kill
pcase mce-clear-sysctl mce_clear late "dirty LRU page" Recovered AO $AO4 data=ok extra=$MCE_GET
echo 0 >$early_kill

# --- kill_procs() with fail=true: SIGKILL when the unmap fails --------------
# a swap-cache page (TTU_HWPOISON cleared) that may be pinned (1280
# references from vmsplice(): page_maybe_dma_pinned()) cannot be unmapped
# (try_to_unmap_one(): page_try_share_anon_rmap() refuses): "failed to
# unmap page", the early-kill process is SIGKILLed, "unmapping failed page:
# Ignored"; a late one is left alone and madvise() returns EBUSY
pcase unmap-fail unmap_fail early "unmapping failed page" Ignored none poison=killed child=sig9 hwp=1 \
	extra=swapcache=1 refs=1280 "@dmesg=%pfn: keeping poisoned page in swap cache" \
	"@dmesg=%pfn: failed to unmap page (mapcount=1)" \
	"@dmesg=%pfn: forcibly killing page_states:" "@dmesg=because of failure to unmap corrupted page"
pcase unmap-fail-late unmap_fail late "unmapping failed page" Ignored none poison=EBUSY data=ok \
	child=exit0 hwp=1 extra=swapcache=1 refs=1280 "@dmesg=%pfn: failed to unmap page (mapcount=1)"

# --- corrupt-filter-*: one page that passes, one that is filtered -----------
# hwpoison_filter() (memory_failure() after lock_page()) with
# corrupt-filter-enable=1: a rejected page gets PG_hwpoison cleared again
# and -EOPNOTSUPP, which madvise() turns into 0: no line, no count, not
# poisoned (hwp=0), no signal. Each filter alone, the others at their
# defaults (dev ~0U: any; flags mask 0: any; memcg 0: any).
filter_defaults="enable=0 dev-major=4294967295 dev-minor=4294967295 flags-mask=0 flags-value=0"
[ -e $hw/corrupt-filter-memcg ] && filter_defaults="$filter_defaults memcg=0"
filter_reset() {
	for kv in $filter_defaults; do
		echo "${kv#*=}" >"$hw/corrupt-filter-${kv%%=*}"
	done
}
filter_are_defaults() {
	for kv in $filter_defaults; do
		[ "$(cat "$hw/corrupt-filter-${kv%%=*}")" = "${kv#*=}" ] || return 1
	done
}
check filters-default "every corrupt-filter-* at its default ($filter_defaults)" filter_are_defaults

# dev_major/dev_minor: the page cache's superblock device (hwpoison_filter_dev()):
# ext2 on /dev/ram0 passes, tmpfs (anonymous device) does not; then a minor
# that is not ram0's rejects the ext2 page too
majmin=$(cat /sys/block/ram0/dev)
echo "${majmin%:*}" >$hw/corrupt-filter-dev-major
echo "${majmin#*:}" >$hw/corrupt-filter-dev-minor
echo 1 >$hw/corrupt-filter-enable
pcase filter-dev-pass clean_file late "clean LRU page" Recovered none data=ok hwp=1 extra=pread=ok
pcase filter-dev-other tmpfs late - - none @count=0 @hc=0 data=ok hwp=0 extra=pread=ok
echo $(( ${majmin#*:} + 1 )) >$hw/corrupt-filter-dev-minor
pcase filter-minor-other clean_file late - - none @count=0 @hc=0 data=ok hwp=0 extra=pread=ok
filter_reset

# flags_mask/flags_value: /proc/kpageflags bits (stable_page_flags()):
# KPF_ANON set passes an anonymous page, not a tmpfs one
echo $((1 << 12)) >$hw/corrupt-filter-flags-mask
echo $((1 << 12)) >$hw/corrupt-filter-flags-value
echo 1 >$hw/corrupt-filter-enable
pcase filter-flags-pass dirty_anon late "dirty LRU page" Recovered AR $AR4 data=ok hwp=1
pcase filter-flags-other tmpfs late - - none @count=0 @hc=0 data=ok hwp=0
filter_reset

# memcg: the inode number of a cgroup v2 directory (page_cgroup_ino() of
# the page's memcg): a page charged in that cgroup passes, one in the root
# cgroup does not
cg=/sys/fs/cgroup/hwlab
if [ ! -e $hw/corrupt-filter-memcg ]; then
	fail memcg-filter-file "no $hw/corrupt-filter-memcg: the kernel lacks CONFIG_MEMCG"
else
	mount -t cgroup2 cgroup2 /sys/fs/cgroup
	echo +memory >/sys/fs/cgroup/cgroup.subtree_control
	mkdir -p $cg
	check memcg-cgroup "$cg with the memory controller" test -e $cg/memory.current
	stat -c %i $cg >$hw/corrupt-filter-memcg
	echo "  corrupt-filter-memcg: $(cat $hw/corrupt-filter-memcg) ($cg)"
	echo 1 >$hw/corrupt-filter-enable
	pcase filter-memcg-pass dirty_anon late "dirty LRU page" Recovered AR $AR4 data=ok hwp=1 @cgroup=$cg
	pcase filter-memcg-other dirty_anon late - - none @count=0 @hc=0 data=ok hwp=0
	filter_reset
fi
check filters-reset "every corrupt-filter-* back at its default" filter_are_defaults
finish
