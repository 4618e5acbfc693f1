# hwpoison-guest never poisons a page it cannot trust: a memslot table that
# is a symlink, someone else's, writable by others, stale, of a process
# that is not hwlab-vmm, or pointing outside the VMM's RAM; a zero page, a
# page never touched; a malformed number. Each refusal is a clear message,
# exit 1 and nothing written. Every run goes to a fake debugfs (a plain
# file for hwpoison/corrupt-pfn), so this also runs on the host
# (tests/host/tool_safety.sh) without poisoning anything there.
# The VMM publishes its table as a new file and removes it at every exit.
#
# Env (the host wrapper sets them; inside the outer VM the defaults):
#   HWLAB_CHECK_LIB VMM TOOL GUEST
. "${HWLAB_CHECK_LIB:-/hwlab/lib/check.sh}"
VMM=${VMM:-hwlab-vmm}
TOOL=${TOOL:-hwpoison-guest}
GUEST=${GUEST:-/hwlab/data/guest.elf}
t=$(mktemp -d)
fake=$t/debugfs
pfn_file=$fake/hwpoison/corrupt-pfn
mkdir -p "$fake/hwpoison"
: >"$pfn_file"

# report_field LOG FIELD: a string field of the vmm_start line
report_field() { sed -n "s/.*\"event\":\"vmm_start\".*\"$2\":\"\\([^\"]*\\)\".*/\\1/p" "$1"; }
# refused NAME PATTERN ARGS...: the tool exits 1 with PATTERN and writes nothing
refused() {
	name=$1 pattern=$2
	shift 2
	: >"$pfn_file"
	expect "$name" 1 "$pattern" "$TOOL" --debugfs "$fake" "$@"
	check "$name-wrote-nothing" "$pfn_file left empty" test ! -s "$pfn_file"
}
# table_copy FILE SED_SCRIPT: the live table, edited, as a root-made 0600 file
table_copy() {
	sed "$2" "$memmap" >"$1"
	chmod 0600 "$1"
}
# pagemap_pfn PID HVA: the PFN behind HVA, read here without the tool (bits 0-54)
pagemap_pfn() {
	hex=$(dd if="/proc/$1/pagemap" bs=8 skip=$(($2 / 4096)) count=1 2>/dev/null |
		od -An -tx8 | tr -d ' \n')
	printf '%#x\n' $((0x${hex#??} & 0x7fffffffffffff))
}
wait_ready() {
	n=0
	while ! grep -q '"event":"guest_pass"' "$1" && kill -0 "$2" 2>/dev/null && [ $n -lt 1200 ]; do
		sleep 0.1
		n=$((n + 1))
	done
}

"$VMM" --passes 0 --guest-read-unwritten "$GUEST" >"$t/vmm.log" 2>&1 &
pid=$!
wait_ready "$t/vmm.log" "$pid"
memmap=$(report_field "$t/vmm.log" memmap)
echo "  vmm pid $pid, table $memmap"
check table-published "the VMM published $memmap, mode 0600" \
	sh -c "[ -f '$memmap' ] && [ ! -L '$memmap' ] && ls -ln '$memmap' | grep -q '^-rw------- '"
check table-private-dir "its directory is mode 0700" \
	sh -c "ls -lnd '$(dirname "$memmap")' | grep -q '^drwx------'"
hva0=$(sed -n 's/^0 [^ ]* [^ ]* \(0x[0-9a-f]*\) .*/\1/p' "$memmap")

# the one valid request: the PFN the tool writes is the one pagemap shows
: >"$pfn_file"
expect valid-request 0 '"gpa":"0x612000"' "$TOOL" --debugfs "$fake" "$pid" 0x612000
want=$(pagemap_pfn "$pid" $((hva0 + 0x612000)))
got=$(cat "$pfn_file")
check valid-pfn-written "corrupt-pfn got $got, pagemap says $want" test "$got" = "$want"

# pages the VMM does not own alone, or that are not there
refused zero-page 'the shared zero page (the guest only read it)' "$pid" 0x3ff000
refused not-present 'is not present: the guest never touched it' "$pid" 0
refused wait-present-times-out 'is still not present after 1 s' --wait-present 1 "$pid" 0
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
table_copy "$t/stale" 's/^# pid .*/# pid 1/'
refused table-stale-pid 'was written by pid 1, not' --memmap "$t/stale" "$pid" 0x612000
table_copy "$t/unmapped" 's/^0 \([^ ]*\) \([^ ]*\) [^ ]* /0 \1 \2 0x10000 /'
refused table-hva-unmapped 'is not inside private anonymous writable mappings of pid' \
	--memmap "$t/unmapped" "$pid" 0x612000
# Writable and mapped by the VMM alone, yet not guest RAM: the VMM's own data
# segment (a page-cache page of the binary) and a vCPU's kvm_run (a kernel
# page). The table names a one-page slot at GPA 0 there.
data=$(sed -n 's/^\([0-9a-f]*\)-[0-9a-f]* rw-p .*hwlab-vmm$/\1/p' "/proc/$pid/maps" | head -n 1)
kvm_run=$(sed -n 's/^\([0-9a-f]*\)-[0-9a-f]* rw-s .*kvm-vcpu.*/\1/p' "/proc/$pid/maps" | head -n 1)
for target in data:$data kvm_run:$kvm_run; do
	name=${target%%:*} hva=${target#*:}
	if [ -z "$hva" ]; then
		skip "table-$name" "no $name mapping in /proc/$pid/maps"
		continue
	fi
	table_copy "$t/$name" "s/^0 [^ ]* [^ ]* [^ ]* /0 0 0x1000 0x$hva /"
	refused "table-$name" 'is not inside private anonymous writable mappings of pid' \
		--memmap "$t/$name" "$pid" 0
done
table_copy "$t/garbage" '$s/$/ trailing/'
refused table-garbage 'is malformed: line 3' --memmap "$t/garbage" "$pid" 0x612000
table_copy "$t/bigpid" 's/^# pid .*/# pid 4294967297/'
refused table-pid-overflow 'is malformed: line 1' --memmap "$t/bigpid" "$pid" 0x612000
sleep 60 &
other=$!
table_copy "$t/other" "s/^# pid .*/# pid $other/"
refused not-a-vmm "pid $other is not a hwlab-vmm" --memmap "$t/other" "$other" 0x612000
kill "$other"

# the VMM creates its table new: never through a file or symlink already there
: >"$t/pre"
expect vmm-precreated 1 "$t/pre already exists" "$VMM" --passes 1 --memmap "$t/pre" "$GUEST"
check vmm-precreated-kept "the file already there is left as it was" test -f "$t/pre" -a ! -s "$t/pre"
ln -s "$t/target" "$t/planted"
expect vmm-symlink 1 "$t/planted already exists" "$VMM" --passes 1 --memmap "$t/planted" "$GUEST"
check vmm-symlink-not-followed "nothing created through the symlink" test ! -e "$t/target"

# the table goes away at every exit
kill -TERM "$pid"
wait "$pid"
rc=$?
check sigterm-exit "VMM stopped by SIGTERM exits 0 (got $rc)" test "$rc" -eq 0
check sigterm-removed "table removed after SIGTERM" test ! -e "$memmap"
"$VMM" --passes 1 "$GUEST" >"$t/normal.log" 2>&1
rc=$?
normal=$(report_field "$t/normal.log" memmap)
check normal-exit "a finished guest: VMM exits 0 (got $rc)" test "$rc" -eq 0
check normal-removed "table $normal removed at the normal end" test -n "$normal" -a ! -e "$normal"
"$VMM" --guest-fail-test "$GUEST" >"$t/fail.log" 2>&1
rc=$?
failed=$(report_field "$t/fail.log" memmap)
check error-exit "a failed guest: VMM exits 1 (got $rc)" test "$rc" -eq 1
check error-removed "table $failed removed at the error exit" test -n "$failed" -a ! -e "$failed"
# The private directory: a symlink or a directory others may enter is
# refused. Only inside the outer VM, which is thrown away after the run:
# on the host, /run/hwlab-vmm is not this test's to move.
if [ "$VMM" = hwlab-vmm ]; then
	dir=$(dirname "$memmap")
	mv "$dir" "$t/real-dir"
	ln -s "$t/real-dir" "$dir"
	expect vmm-dir-symlink 1 "$dir is not a directory (a symbolic link)" "$VMM" --passes 1 "$GUEST"
	rm "$dir"
	mv "$t/real-dir" "$dir"
	chmod 0755 "$dir"
	expect vmm-dir-mode 1 "$dir has mode 0755, not 0700" "$VMM" --passes 1 "$GUEST"
	chmod 0700 "$dir"
fi
rm -rf "$t"
finish
