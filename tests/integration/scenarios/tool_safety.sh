# hwpoison-guest never poisons a page it cannot trust: a memslot table that
# is a symlink, someone else's, writable by others, stale (left by a killed
# VMM whose pid a new one got: its header's start time, and the new VMM
# does not hold that file open), a copy, of a process that is not
# hwlab-vmm, or pointing outside the VMM's marked guest RAM (its .bss, heap,
# a thread's stack); a zero page, a page never touched; a malformed number.
# Each refusal is a clear message, exit 1 and nothing written. Every run goes to a fake debugfs (a plain
# file for hwpoison/corrupt-pfn), so this also runs on the host
# (tests/host/tool_safety.sh) without poisoning anything there.
# The VMM publishes its table as a new file and removes it at every exit.
#
# Env (the host wrapper sets them; inside the outer VM the defaults):
#   HWLAB_CHECK_LIB VMM TOOL GUEST JSON_FIELD PAGEMAP_PFN
. "${HWLAB_CHECK_LIB:-/hwlab/lib/check.sh}"
VMM=${VMM:-hwlab-vmm}
TOOL=${TOOL:-hwpoison-guest}
GUEST=${GUEST:-/hwlab/data/guest.elf}
JSON_FIELD=${JSON_FIELD:-json-field}
PAGEMAP_PFN=${PAGEMAP_PFN:-pagemap-pfn}
t=$(mktemp -d)
fake=$t/debugfs
pfn_file=$fake/hwpoison/corrupt-pfn
mkdir -p "$fake/hwpoison"
: >"$pfn_file"

# the helpers and fixtures below (refused, table_copy, start_ready, ...), and
# the last part's checks (table_lifecycle)
. "$(dirname "$0")/_tool_safety.sh"
. "$(dirname "$0")/_tool_safety_lifecycle.sh"

# guest RAM in 4 KiB pages for the whole run (thp_madvise: pages the guest
# never touched stay absent for not-present below)
thp_madvise
start_ready "$t/vmm.log" --passes 0 --guest-read-unwritten "$GUEST"
pid=$started
memmap=$(report_field "$t/vmm.log" memmap)
echo "  vmm pid $pid, table $memmap"
check table-published "the VMM published $memmap, mode 0600" \
	sh -c "[ -f '$memmap' ] && [ ! -L '$memmap' ] && ls -ln '$memmap' | grep -q '^-rw------- '"
check table-private-dir "its directory is mode 0700" \
	sh -c "ls -lnd '$(dirname "$memmap")' | grep -q '^drwx------'"
hva0=$(slot0_hva "$memmap")

# the one valid request: the PFN the tool writes is the one pagemap shows
: >"$pfn_file"
expect valid-request 0 '"gpa":"0x612000"' "$TOOL" --debugfs "$fake" "$pid" 0x612000
want=$("$PAGEMAP_PFN" "$pid" $((hva0 + 0x612000)))
got=$(cat "$pfn_file")
check valid-pfn-written "corrupt-pfn got $got, pagemap says $want" test "$got" = "$want"

# pages the VMM does not own alone, or that are not there
refused zero-page 'the shared zero page (the guest only read it)' "$pid" 0x3ff000
# a page nobody touched, found in pagemap, not assumed (first_absent_gpa)
untouched=$(first_absent_gpa "$pid" "$hva0")
if [ -n "$untouched" ]; then
	refused not-present 'is not present: the guest never touched it' "$pid" $untouched
	refused wait-present-times-out 'is still not present after 1 s' --wait-present 1 "$pid" $untouched
elif [ "$VMM" = hwlab-vmm ]; then
	fail untouched-found "no 2 MiB of guest RAM with its first page absent, THP madvise"
else
	skip not-present "every 2 MiB of guest RAM is present (this host's THP: $(cat "$THP" 2>/dev/null))"
fi
refused outside-ram 'is not in the guest RAM of pid' "$pid" 0x40000000

# numbers: nothing empty, negative, overflowing or trailing
refused empty-gpa "'' is not a guest-physical address" "$pid" ''
# after "--": getopt would take "-1" for an option (exit 2, usage) before we saw it
refused negative-gpa "'-1' is not a guest-physical address" -- "$pid" -1
refused gpa-overflow "'0x10000000000000000' is not a guest-physical address" "$pid" \
	0x10000000000000000
refused gpa-trailing "'0x612000x' is not a guest-physical address" "$pid" 0x612000x
refused pid-wraps "'4294967297' is not a pid" 4294967297 0x612000
refused wait-negative "--wait-present takes seconds" --wait-present -1 "$pid" 0x612000

# tables the tool must not trust
ln -s "$memmap" "$t/link"
refused table-symlink 'is a symbolic link: refusing to follow it' --memmap "$t/link" "$pid" 0x612000
table_copy "$t/open" ''
chmod 0644 "$t/open"
refused table-mode 'has mode 0644, not 0600' --memmap "$t/open" "$pid" 0x612000
table_copy "$t/nobody" ''
chown 65534 "$t/nobody"
refused table-owner 'is owned by uid 65534, but pid' --memmap "$t/nobody" "$pid" 0x612000
mkfifo "$t/fifo"
refused table-fifo 'is not a regular file' --memmap "$t/fifo" "$pid" 0x612000
table_copy "$t/stale" 's/^# pid [0-9]*/# pid 1/'
refused table-stale-pid 'was written by pid 1, not' --memmap "$t/stale" "$pid" 0x612000
# A table must carry its writer's start time, be that process's, and be the
# very file it holds open: a copy that is right in every line is refused.
table_copy "$t/nostart" 's/^\(# pid [0-9]*\) start .*/\1/'
refused table-no-start "is malformed: line 1: '# pid $pid' is not '# pid N start T'" \
	--memmap "$t/nostart" "$pid" 0x612000
table_copy "$t/wrongstart" "s/^\\(# pid [0-9]*\\) start .*/\\1 start $(($(start_time "$pid") + 1))/"
refused table-start-wrong 'now is a process that started at' --memmap "$t/wrongstart" "$pid" 0x612000
table_copy "$t/copy" ''
refused table-copy-not-held "is not open in pid $pid: it is not the table that process published" \
	--memmap "$t/copy" "$pid" 0x612000
check table-held "the VMM holds its table open" sh -c "ls -l /proc/$pid/fd | grep -qF '$memmap'"
table_copy "$t/unmapped" 's/^0 \([^ ]*\) \([^ ]*\) [^ ]* /0 \1 \2 0x10000 /'
refused table-hva-unmapped 'is not inside guest RAM' --memmap "$t/unmapped" "$pid" 0x612000
# Writable and mapped by the VMM alone, yet not guest RAM (data, kvm_run,
# .bss, heap, a thread's stack): a table with a one-page slot at GPA 0 there.
for target in $(vmm_private_mappings "$pid"); do
	name=${target%%:*} hva=${target#*:}
	if [ -z "$hva" ]; then
		skip "table-$name" "no $name mapping in /proc/$pid/maps"
		continue
	fi
	table_copy "$t/$name" "s/^0 [^ ]* [^ ]* [^ ]* /0 0 0x1000 0x$hva /"
	refused "table-$name" 'is not inside guest RAM' --memmap "$t/$name" "$pid" 0
done
# what makes guest RAM: VmFlags dd on every kernel, and its name where the
# kernel names anonymous mappings (the outer VM's; not the host's 6.18)
named=$(report_value "$t/vmm.log" ram_named)
check ram-dontdump "guest RAM at $hva0 is MADV_DONTDUMP (VmFlags dd)" \
	sh -c "grep -A30 '^${hva0#0x}-' /proc/$pid/smaps | grep -m1 '^VmFlags' | grep -qw dd"
# Debian's stock kernels have no CONFIG_ANON_VMA_NAME (prctl PR_SET_VMA
# fails with EINVAL): there the tool's rule is VmFlags dd on a private
# anonymous mapping alone, and the refusals above (the VMM's heap, .bss,
# text) are what show it still holds
case ${HWLAB_HOST:-} in bookworm | trixie | sid) stock_host=1 ;; *) stock_host=0 ;; esac
if [ "$VMM" = hwlab-vmm ] && [ $stock_host = 1 ]; then
	check ram-unnamed "Debian's stock $HWLAB_HOST kernel ($(uname -r)) cannot name anonymous mappings: vmm_start says ram_named false (got $named); the tool's rule is VmFlags dd + private anonymous, and the tables above pointing outside it were refused" \
		test "$named" = false
elif [ "$VMM" = hwlab-vmm ]; then
	check ram-named "vmm_start says ram_named true (got $named), smaps names it" \
		sh -c "[ '$named' = true ] && grep -q '^${hva0#0x}-.*\[anon:hwlab-guest-ram\]\$' /proc/$pid/maps"
fi
table_copy "$t/garbage" '$s/$/ trailing/'
refused table-garbage 'is malformed: line 3' --memmap "$t/garbage" "$pid" 0x612000
table_copy "$t/bigpid" 's/^# pid [0-9]*/# pid 4294967297/'
refused table-pid-overflow 'is malformed: line 1' --memmap "$t/bigpid" "$pid" 0x612000
sleep 60 &
other=$!
table_copy "$t/other" "s/^# pid [0-9]*/# pid $other/"
refused not-a-vmm "pid $other is not a hwlab-vmm" --memmap "$t/other" "$other" 0x612000
kill "$other"

# The injector is opened first, and only the kernel's (a regular file; on
# the real debugfs, on debugfs), without blocking: a FIFO planted there gets
# nothing, whether someone reads it or not.
odd=$t/odd
mkdir -p "$odd/hwpoison" && mkfifo "$odd/hwpoison/corrupt-pfn"
expect injector-fifo 1 'is not a regular file' timeout 20 "$TOOL" --debugfs "$odd" "$pid" 0x612000
cat "$odd/hwpoison/corrupt-pfn" >"$t/fifo.out" &
reader=$!
expect injector-fifo-read 1 'is not a regular file' timeout 20 "$TOOL" --debugfs "$odd" "$pid" 0x612000
check injector-fifo-got-nothing "the FIFO's reader got nothing" test ! -s "$t/fifo.out"
kill "$reader" 2>/dev/null
wait "$reader" 2>/dev/null
rm "$odd/hwpoison/corrupt-pfn"
ln -s "$pfn_file" "$odd/hwpoison/corrupt-pfn"
refused injector-symlink 'a symbolic link or not a directory on the way' --debugfs "$odd" "$pid" 0x612000
# a trailing slash made open() follow a symlinked debugfs directory whatever
# O_NOFOLLOW said: the PFN went where the link pointed
ln -s "$fake" "$t/debugfs-link"
refused injector-dir-symlink-slash 'a symbolic link or not a directory on the way' \
	--debugfs "$t/debugfs-link/" "$pid" 0x612000
# The last checks come after that open, right before the write: stopped
# there (the test hook), the VMM killed and reaped, the tool writes nothing.
tool_stopped_at_recheck "$t/gone.log" "$t/tool.out"
check stop-before-recheck "the tool stopped itself with the injector open (state T)" \
	test "$(proc_state "$tool")" = T
kill_reaped "$gone"
check target-reaped "the VMM is gone" sh -c "! kill -0 $gone 2>/dev/null"
kill -CONT "$tool"
wait "$tool"
rc=$?
sed 's/^/  | /' "$t/tool.out"
check recheck-refused "the tool, continued, refused (exit $rc): the VMM it checked is gone" \
	sh -c "[ $rc -eq 1 ] && grep -q 'is no longer the hwlab-vmm it was' '$t/tool.out'"
check recheck-wrote-nothing "$pfn_file left empty" test ! -s "$pfn_file"
rm -f "$gone_table"
# The real debugfs must be debugfs: inside the outer VM, a tmpfs mounted over
# it for a moment, with a regular hwpoison/corrupt-pfn, gets nothing.
if [ "$VMM" = hwlab-vmm ] && mount -t tmpfs none /sys/kernel/debug; then
	mkdir /sys/kernel/debug/hwpoison
	: >/sys/kernel/debug/hwpoison/corrupt-pfn
	expect injector-not-debugfs 1 'is not on debugfs' "$TOOL" "$pid" 0x612000
	check injector-not-debugfs-wrote-nothing "the tmpfs file is left empty" \
		test ! -s /sys/kernel/debug/hwpoison/corrupt-pfn
	umount /sys/kernel/debug
fi

# the table's life: created new, stale, a reused pid, every exit, its directory
table_lifecycle

thp_restore
rm -rf "$t"
finish
