#!/usr/bin/env bash
# The checks' two readers (tools/, built static so that the outer VM runs
# them too): pagemap-pfn, the PFN behind a process's address, and
# json-field, a member of the VMM's report lines, read by a JSON parser.
# qmp_tool and libvirt_tool compare what hwpoison-guest wrote with what these
# read, vmm_runs counts with them, and the outer VM's scenarios take their
# numbers from them: a reader that answers wrongly, or answers nothing where
# it should say why, makes those checks pass or fail for the wrong reason.
# Checked on fixtures (every entry bit, every refusal, JSON's escapes,
# nesting, bad UTF-8, a line of megabytes) and on a live shared mapping;
# nothing is poisoned.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/tests/lib/check.sh"
pagemap_pfn=$here/build/pagemap-pfn
json_field=$here/build/json-field
tmp=$(mktemp -d)
trap 'exec 3>&- 2>/dev/null; [ -n "${mpid:-}" ] && kill $mpid 2>/dev/null; rm -rf "$tmp"' EXIT

if [ ! -x "$pagemap_pfn" ] || [ ! -x "$json_field" ]; then
	fail test-helpers "no $pagemap_pfn or $json_field: make all builds them"
	finish
fi
page=$(getconf PAGESIZE)

# --- pagemap-pfn on a fixture in pagemap's format: one little-endian
# 64-bit entry per page. Page 1: present (63), exclusive (56), soft-dirty
# (55), PFN 0x12345 - the flag bits above 54 are not the PFN's. Page 2:
# present, PFN 0 (what a reader without CAP_SYS_ADMIN gets). Page 3:
# swapped (62), not present. Page 4: present, file (61), every PFN bit set.
entry() { # entry HEX16: its 8 bytes, least significant first
	local h=$1 i
	for i in 14 12 10 8 6 4 2 0; do
		printf "\\$(printf %03o $((16#${h:$i:2})))"
	done
}
{
	entry 0000000000000000
	entry 8180000000012345
	entry 8000000000000000
	entry 4000000000000abc
	entry a07fffffffffffff
} >"$tmp/pagemap"
got=$("$pagemap_pfn" --pagemap "$tmp/pagemap" $((2 * page - 1)) 2>&1)
check pfn-bits "the last byte of a present page: PFN 0x12345, bits 55 and 56 not in it (got $got)" \
	test "$got" = 0x12345
got=$("$pagemap_pfn" --pagemap "$tmp/pagemap" $(printf '%#x' $((4 * page))) 2>&1)
check pfn-mask "a hex address, every PFN bit set and bit 61: PFN bits 0-54 (got $got)" \
	test "$got" = 0x7fffffffffffff
expect pfn-not-present 1 'the page at 0x0 is not present' "$pagemap_pfn" --pagemap "$tmp/pagemap" 0
expect pfn-swapped 1 'is not present (pagemap entry 0x4000000000000abc, swapped out)' \
	"$pagemap_pfn" --pagemap "$tmp/pagemap" $((3 * page))
expect pfn-hidden 1 'its PFN is hidden (0)' "$pagemap_pfn" --pagemap "$tmp/pagemap" $((2 * page))
expect pfn-past-end 1 'past the end of the user address space' \
	"$pagemap_pfn" --pagemap "$tmp/pagemap" $((5 * page))
expect pfn-no-process 1 'no such process: pid' \
	"$pagemap_pfn" $(($(cat /proc/sys/kernel/pid_max) + 1)) 0x1000
expect pfn-bad-hva 2 "HVA 'banana' is not a number" "$pagemap_pfn" $$ banana
expect pfn-negative-hva 2 "HVA '-4096' is negative" "$pagemap_pfn" --pagemap "$tmp/pagemap" -4096
expect pfn-bad-pid 2 "PID '12x' is not a number" "$pagemap_pfn" 12x 0x1000
expect pfn-pid-zero 2 'PID 0 is not a process' "$pagemap_pfn" 0 0x1000
expect pfn-no-args 2 'usage: pagemap-pfn PID HVA' "$pagemap_pfn" $$
expect pfn-flags-no-pagemap 2 'want PID HVA, --pagemap FILE HVA or --flags PID HVA' \
	"$pagemap_pfn" --flags --pagemap "$tmp/pagemap" 0
expect pfn-leading-zero 2 "HVA '0612000' is not a number" "$pagemap_pfn" --pagemap "$tmp/pagemap" 0612000
# a fixture is a regular file, opened as named: not through a symlink, and
# a FIFO (which would block a reader without a writer) is refused at once
ln -s "$tmp/pagemap" "$tmp/pagemap-link"
expect pfn-fixture-symlink 1 'a symbolic link: refusing to follow it' \
	"$pagemap_pfn" --pagemap "$tmp/pagemap-link" $((2 * page - 1))
mkfifo "$tmp/pagemap-fifo"
expect pfn-fixture-fifo 1 'not a regular file' timeout 10 "$pagemap_pfn" --pagemap "$tmp/pagemap-fifo" 0

# --- pagemap-pfn on a live process: one shared page mapped at two
# addresses has one PFN; an untouched anonymous page is not present. The
# mapping process is python3's (make deps installs it).
if ! command -v python3 >/dev/null; then
	skip pfn-live "no python3 on this host to map the pages (make deps installs it)"
else
mkfifo "$tmp/hold"
python3 -c '
import ctypes, mmap, os, sys
fd = os.memfd_create("hwlab-test-helpers")
os.ftruncate(fd, mmap.PAGESIZE)
a = mmap.mmap(fd, mmap.PAGESIZE, mmap.MAP_SHARED)
b = mmap.mmap(fd, mmap.PAGESIZE, mmap.MAP_SHARED)
untouched = mmap.mmap(-1, mmap.PAGESIZE, mmap.MAP_PRIVATE)
a[0:1] = b"x"
b[0]
def addr(m):
    return hex(ctypes.addressof(ctypes.c_char.from_buffer(m)))
print(addr(a), addr(b), addr(untouched), flush=True)
open(sys.argv[1]).read()' "$tmp/hold" >"$tmp/maps" &
mpid=$!
# read-write: the open does not wait for a reader, so a child that died
# before opening its end cannot hang this check
exec 3<>"$tmp/hold"
n=0
while [ ! -s "$tmp/maps" ] && kill -0 $mpid 2>/dev/null && [ $n -lt 100 ]; do
	sleep 0.1
	n=$((n + 1))
done
read -r hva_a hva_b hva_untouched <"$tmp/maps"
if [ -z "${hva_untouched:-}" ]; then
	fail pfn-live "the mapping process printed no addresses ($(cat "$tmp/maps"))"
elif [ "$(id -u)" -eq 0 ]; then
	pfn_a=$("$pagemap_pfn" $mpid "$hva_a" 2>&1)
	pfn_b=$("$pagemap_pfn" $mpid "$((hva_b + 100))" 2>&1)
	check pfn-live-shared "one shared page at $hva_a and $hva_b: one PFN ($pfn_a, $pfn_b)" \
		sh -c "[ \$(($pfn_a)) -gt 0 ] && [ '$pfn_a' = '$pfn_b' ]"
	# --flags: the same PFN, then its kpageflags word, which says it is
	# mapped (KPF_MMAP, bit 11) and not anonymous (KPF_ANON, 12: shmem)
	read -r pfn_f flags_f < <("$pagemap_pfn" --flags $mpid "$hva_a" 2>&1)
	check pfn-live-flags "--flags: '$pfn_f $flags_f', the PFN and a mapped non-anon page" \
		sh -c "[ '$pfn_f' = '$pfn_a' ] && [ \$((($flags_f >> 11) & 3)) -eq 1 ]"
else
	expect pfn-live-hidden 1 'its PFN is hidden (0)' "$pagemap_pfn" $mpid "$hva_a"
fi
[ -n "${hva_untouched:-}" ] &&
	expect pfn-live-not-present 1 "pid $mpid: the page at $hva_untouched is not present" \
		"$pagemap_pfn" $mpid "$hva_untouched"
exec 3>&-
wait $mpid
mpid=
fi

# --- json-field on a report that shares its log with other lines, as a
# VMM's stdout and stderr do (2>&1), and a guest message that holds what a
# sed scrape would take for members
cat >"$tmp/report" <<'EOF'
hwlab-vmm: a message on stderr, {"pid":1} inside it
{"event":"vmm_start","pid":4242,"vcpus":2,"t_ns":1}
==7==ERROR: AddressSanitizer: not a report line
{"event":"guest_log","vcpu":0,"msg":"a \"quoted\" {brace} \"pid\":99,\"count\":3","t_ns":2}
{"event":"guest_log_suppressed","vcpu":0,"count":7,"t_ns":3}
  {"event":"guest_log_suppressed","vcpu":1,"count":5,"t_ns":4}
{"event":"poison","pid":4242,"gpa":"0x100000","hva":"0x7f0000100000","pfn":"0x1234","t_ns":5}
{"event":"vmm_exit","status":0,"ao_overflows":0,"foreign_signals":1500,"clean":true,"t_ns":6}
EOF
# json_ok NAME DETAIL WANT ARGS...: json-field ARGS exits 0 printing WANT
json_ok() {
	local name=$1 detail=$2 want=$3 got rc
	shift 3
	got=$("$json_field" "$@" 2>&1)
	rc=$?
	check "$name" "$detail (exit $rc, got '$(printf '%s' "$got" | tr '\n' ' ')')" \
		test "$rc:$got" = "0:$want"
}
json_ok json-filter "vmm_start's pid" 4242 "$tmp/report" pid event=vmm_start
json_ok json-string "poison's hva, a string as it is" 0x7f0000100000 "$tmp/report" hva event=poison
json_ok json-every-line "every guest_log_suppressed count, in order; not the 3 inside a message" \
	"$(printf '7\n5')" "$tmp/report" count event=guest_log_suppressed
json_ok json-no-filter "pid of every report line: not the 1 on stderr, not the 99 inside a message" \
	"$(printf '4242\n4242')" "$tmp/report" pid
json_ok json-escapes "a message with quotes and braces, unescaped" \
	'a "quoted" {brace} "pid":99,"count":3' "$tmp/report" msg event=guest_log
json_ok json-number-filter "a filter on a number (vcpu=1)" 5 "$tmp/report" count vcpu=1
json_ok json-two-filters "two filters, both must hold" 7 "$tmp/report" count event=guest_log_suppressed vcpu=0
json_ok json-bool "true as JSON spells it, as value and filter" 1500 "$tmp/report" foreign_signals clean=true
json_ok json-stdin "stdin, a last line without a newline" 0x1234 - pfn event=poison \
	< <(printf '%s' '{"event":"poison","pfn":"0x1234"}')
expect json-no-match 1 'no report line with pid where event=vmm_stop' \
	"$json_field" "$tmp/report" pid event=vmm_stop
expect json-no-field 1 'no report line with nosuch' "$json_field" "$tmp/report" nosuch

# a report line cut short in the middle of a file: an error naming it, not
# the lines before it and not an empty answer
{ sed -n 1,2p "$tmp/report"; echo '{"event":"poison","pid":'; sed -n '3,$p' "$tmp/report"; } >"$tmp/cut"
expect json-malformed 2 "cut:3: malformed report line" "$json_field" "$tmp/cut" pid event=vmm_start
check json-malformed-no-answer "a malformed line: nothing on stdout, not even the match before it" \
	test -z "$("$json_field" "$tmp/cut" pid event=vmm_start 2>/dev/null)"
printf '%s\n' '{"event":"a","pid":1} {"event":"b","pid":2}' >"$tmp/two"
expect json-two-objects 2 'two:1: malformed report line (Extra data' "$json_field" "$tmp/two" pid
# a malformed line's excerpt is the file's bytes: escaped, one line, no ESC
printf '{"event":"\033[2J\033]0;owned\007",\n' >"$tmp/esc"
expect json-malformed-escaped 2 'esc:1: malformed report line' "$json_field" "$tmp/esc" pid
check json-malformed-escaped-bytes "the excerpt's ESC and BEL as \\xNN: $("$json_field" "$tmp/esc" pid 2>&1)" \
	sh -c "'$json_field' '$tmp/esc' pid 2>&1 | grep -qF '\\x1b[2J\\x1b]0;owned\\x07' &&
	       ! '$json_field' '$tmp/esc' pid 2>&1 | LC_ALL=C grep -q '[[:cntrl:]]'"
# a file still being written: its unterminated last line is not a line yet
# with --live, a malformed one without
{ cat "$tmp/report"; printf '%s' '{"event":"guest_log","vcpu":0,"ms'; } >"$tmp/growing"
json_ok json-live "--live: the lines before an unterminated last one" 4242 --live "$tmp/growing" pid event=vmm_start
expect json-unterminated 2 'growing:9: malformed report line' "$json_field" "$tmp/growing" pid event=vmm_start
expect json-bad-filter 2 "filter 'event' is not NAME=VALUE" "$json_field" "$tmp/report" pid event
expect json-no-field-arg 2 'want FILE and FIELD' "$json_field" "$tmp/report"
expect json-no-file 2 'cannot read' "$json_field" "$tmp/nosuch" pid

# --- json-field is a parser: every escape, nesting, numbers as spelt,
# duplicate members, and what RFC 8259 refuses
printf '%s\n' '{"event":"esc","s":"q\" b\\ s\/ \b\f\n\r\t end"}' \
	'{"event":"uni","s":"\u00e9 \u4e2d \ud83d\ude00 \u0041","raw":"é 中 😀"}' \
	'{"event":"nest","v":[1,"a\"b\u0001",{"k":null,"l":[true,false]},-0.5e+3],"o":{}}' \
	'{"event":"num","v":1.50,"big":123456789012345678901234567890}' \
	'{"event":"dup","v":1,"v":2,"tag":"a","tag":"b"}' \
	'{ "event" : "spaced" , "v" : [ 1 , 2 ] }' >"$tmp/parse"
printf '%s\r\n' '{"event":"crlf","v":"x"}' >>"$tmp/parse"
json_ok json-simple-escapes "every simple escape, decoded" "$(printf 'q" b\\ s/ \b\f\n\r\t end')" \
	"$tmp/parse" s event=esc
json_ok json-unicode "\\uXXXX and a surrogate pair as UTF-8, the same as the raw characters" \
	"é 中 😀 A" "$tmp/parse" s event=uni
json_ok json-unicode-raw "raw UTF-8 kept as it is" "é 中 😀" "$tmp/parse" raw event=uni
json_ok json-nested "an array of nested values as compact JSON, its strings escaped" \
	'[1,"a\"b\u0001",{"k":null,"l":[true,false]},-0.5e+3]' "$tmp/parse" v event=nest
json_ok json-empty-object "an empty object" '{}' "$tmp/parse" o event=nest
json_ok json-number-spelling "a number as the line spells it" 1.50 "$tmp/parse" v event=num
json_ok json-big-number "a number past 64 bits, whole" 123456789012345678901234567890 \
	"$tmp/parse" big event=num
json_ok json-duplicate "a duplicate member: the last one counts, for the field and a filter" \
	2 "$tmp/parse" v tag=b
expect json-duplicate-filter 1 'no report line with v where tag=a' "$json_field" "$tmp/parse" v tag=a
json_ok json-blanks "blanks around every token" "[1,2]" "$tmp/parse" v event=spaced
json_ok json-crlf "a line ending in CR LF" x "$tmp/parse" v event=crlf
json_ok json-filter-compound "a filter on a compound value, by its compact spelling" nest \
	"$tmp/parse" event 'o={}'

# a line of megabytes: parsed as it is read, the member after it found too
{
	printf '{"event":"huge","msg":"'
	head -c 3000000 /dev/zero | tr '\0' x
	printf '","after":7}\n'
} >"$tmp/huge"
json_ok json-huge-line "a member after a 3 MB string" 7 "$tmp/huge" after event=huge
check json-huge-value "the 3 MB string itself, whole" \
	test "$("$json_field" "$tmp/huge" msg | wc -c)" -eq 3000001

# refused: each a malformed report line (exit 2, FILE:LINE, the reason),
# nothing on stdout, and no crash on nesting far past the limit
refused_json() { # refused_json NAME REASON LINE
	printf '%s\n' '{"event":"ok","pid":1}' "$3" >"$tmp/$1"
	expect "json-$1" 2 "$1:2: malformed report line ($2" "$json_field" "$tmp/$1" pid
}
refused_json nan 'Expecting value' '{"pid":NaN}'
refused_json trailing-comma 'Expecting property name' '{"pid":1,}'
refused_json single-quotes 'Expecting property name' "{'pid':1}"
refused_json leading-zero 'A number with a leading zero' '{"pid":012}'
refused_json bare-minus 'Expecting a digit' '{"pid":-}'
refused_json bad-escape 'Invalid \escape' '{"pid":"\x41"}'
refused_json bad-uescape 'Invalid \uXXXX escape' '{"pid":"\u12g4"}'
refused_json lone-surrogate 'Lone surrogate \ud83d' '{"pid":"\ud83d x"}'
refused_json lone-low-surrogate 'Lone surrogate \ude00' '{"pid":"\ude00"}'
refused_json control-char 'Invalid control character 0x09' "$(printf '{"pid":"a\tb"}')"
refused_json bad-utf8 'Invalid UTF-8 (byte 0xff)' "$(printf '{"pid":"\377"}')"
refused_json overlong-utf8 'Invalid UTF-8 (byte 0xc0)' "$(printf '{"pid":"\300\257"}')"
refused_json utf8-surrogate 'Invalid UTF-8 (U+D800 is not a character)' "$(printf '{"pid":"\355\240\200"}')"
refused_json cut-utf8 'Invalid UTF-8 (a sequence cut short)' "$(printf '{"pid":"\344\270"}')"
refused_json true-typo 'Expecting value' '{"pid":tru}'
refused_json deep 'Nesting deeper than 128' \
	"{\"pid\":$(head -c 100000 /dev/zero | tr '\0' '[')$(head -c 100000 /dev/zero | tr '\0' ']')}"
deep_ok=$(head -c 127 /dev/zero | tr '\0' '[')$(head -c 127 /dev/zero | tr '\0' ']')
json_ok json-deep-ok "127 arrays inside the line's object: within the limit" "$deep_ok" \
	- v < <(printf '{"v":%s}\n' "$deep_ok")
finish
