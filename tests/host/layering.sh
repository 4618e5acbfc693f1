#!/usr/bin/env bash
# vmm/'s folders are layers (docs/design.md, "Layers of vmm/"): a file
# includes headers of its own folder and of the layers below it, never above,
# and the folders' include graph has no cycle. Without this the folders
# would only be a listing: the next feature would include whatever is nearest
# and the cycles #22 removed would grow back.
#
#   x86/                           0  pure architecture tables, no VM
#   core/                          1  KVM plumbing, the VM, guest memory, report
#   boot/ pc/ mce/ hwlab/ migrate/ 2  peers: may use each other, without a cycle
#   vmm/ (main, options, vcpu)     3  the program: composes everything
#
# Checked: every #include "..." of vmm/ (a header of another folder must be
# named with its folder: "core/vm.h"); and, when build/obj holds objects
# newer than their sources (make all), every call from one object to a
# function another one defines (nm), which catches an upward call through a
# header included for something else.
# KNOWN lists the upward edges that are there today and why; an edge that
# goes away must leave the list too (the check says so), so it only shrinks.
#
# layering.sh [ROOT]: ROOT (default: this tree) holds vmm/; calls are only
# checked for this tree's own build.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/tests/lib/check.sh"
root=${1:-$here}

# folder -> rank; a new folder must be given one here and in design.md
declare -A rank=([x86]=0 [core]=1 [boot]=2 [pc]=2 [mce]=2 [hwlab]=2 [migrate]=2 [vmm]=3)

# Upward edges allowed: "FILE HEADER" (or, for a call, "FILE.o FUNCTION").
# None is left: struct vm (core/vm.h) holds mce/'s and the guest kind's
# state by opaque pointer, the devices keep their own (core/device.h), and
# the options it points at are core/vm_options.h's. A new entry needs a
# reason here; the list can only shrink.
KNOWN=""

folder_of() { # vmm-relative path -> its folder (vmm for the top level)
	case $1 in */*) echo "${1%%/*}" ;; *) echo vmm ;; esac
}

cd "$root/vmm" || { fail layering-tree "no vmm/ under $root"; finish; }
files=$(git ls-files '*.c' '*.h' 2>/dev/null)
[ -n "$files" ] || files=$(find . -name '*.[ch]' | sed 's|^\./||' | sort)

# every include "X" of vmm/: FILE LINE TARGET, TARGET a vmm-relative header
# (X with a folder, or a top-level header), "bare:X" for a header of a
# folder named without it; lib/ and include/ headers are not vmm's and skipped
includes=$(for f in $files; do
	awk -v f="$f" -F'"' '/^[ \t]*#[ \t]*include[ \t]*"/ { print f, FNR, $2 }' "$f"
done | while read -r f line h; do
	if [ -e "$h" ]; then
		echo "$f $line $h"
	elif [ "${f%/*}" != "$f" ] && [ -e "${f%/*}/$h" ]; then
		echo "$f $line bare:$h"
	fi
done)

bad=
edges=
used_known=
# known EDGE: whether EDGE ("FILE HEADER" or "OBJECT SYMBOL") is in KNOWN;
# one that is gets noted as still there
known() {
	[[ $KNOWN == *"
$1
"* ]] || return 1
	used_known="$used_known
$1"
}
while read -r f line h; do
	[ -n "$f" ] || continue
	case $h in
	bare:*)
		bad="$bad
  $f:$line: #include \"${h#bare:}\": name the folder (\"$(folder_of "$f")/${h#bare:}\")"
		continue ;;
	esac
	from=$(folder_of "$f") to=$(folder_of "$h")
	[ "$from" = "$to" ] && continue
	for d in "$from" "$to"; do
		[ -n "${rank[$d]:-}" ] || bad="$bad
  $f:$line: folder $d/ has no layer (tests/host/layering.sh, docs/design.md)"
	done
	[ -n "${rank[$from]:-}" ] && [ -n "${rank[$to]:-}" ] || continue
	known "$f $h" && continue
	edges="$edges
$from $to $f:$line:$h"
	if [ "${rank[$to]}" -gt "${rank[$from]}" ]; then
		bad="$bad
  $f:$line: #include \"$h\": $from/ (layer ${rank[$from]}) must not include $to/ (layer ${rank[$to]})"
	fi
done <<<"$includes"
check layering-includes "every include of vmm/ is of its own folder or a lower layer${bad:+:$bad}" \
	test -z "$bad"

# calls: object -> the object defining the function, when the build is fresh
calls_checked=
obj=$here/build/obj/vmm
if [ "$root" = "$here" ] && [ -d "$obj" ]; then
	stale=
	for f in $files; do
		case $f in *.c) [ "$obj/${f%.c}.o" -nt "$f" ] || stale="$stale $f" ;; esac
	done
	if [ -z "$stale" ]; then
		calls_checked=1
		defs=$(for f in $files; do
			case $f in *.c) nm --defined-only -g "$obj/${f%.c}.o" |
				awk -v o="${f%.c}.o" '$2 ~ /^[TDBRC]$/ { print $3, o }' ;; esac
		done | sort -k1,1)
		uses=$(for f in $files; do
			case $f in *.c) nm -u "$obj/${f%.c}.o" | awk -v o="${f%.c}.o" '{ print $2, o }' ;; esac
		done | sort -k1,1)
		cbad=
		while read -r sym user definer; do
			[ -n "$sym" ] || continue
			from=$(folder_of "$user") to=$(folder_of "$definer")
			[ "$from" = "$to" ] && continue
			[ -n "${rank[$from]:-}" ] && [ -n "${rank[$to]:-}" ] || continue
			known "$user $sym" && continue
			edges="$edges
$from $to ${user%.o}.c:$sym()"
			[ "${rank[$to]}" -gt "${rank[$from]}" ] && cbad="$cbad
  ${user%.o}.c calls $sym() of ${definer%.o}.c: $from/ must not call up into $to/"
		done < <(join -o 1.1,1.2,2.2 <(printf '%s\n' "$uses") <(printf '%s\n' "$defs"))
		check layering-calls "no call from a vmm/ folder up into a higher layer${cbad:+:$cbad}" \
			test -z "$cbad"
	else
		skip layering-calls "objects older than their sources (make all first):$stale"
	fi
else
	skip layering-calls "no build of this tree's vmm/ objects (make all first)"
fi

# a cycle among the folders (peers of one layer can make one), by includes
# or calls: tsort finds it; the edges along it, by file:line or call
loop=$(printf '%s\n' "$edges" | awk 'NF { print $1, $2 }' | sort -u | tsort 2>&1 >/dev/null |
	awk '/input contains a loop/ { if (l != "") print l; l = ""; next }
	     { sub(/^tsort: /, ""); l = l (l == "" ? "" : " ") $0 } END { if (l != "") print l }')
along=
while read -r members; do
	[ -n "$members" ] || continue
	along="$along
  cycle among $members:"
	while read -r from to at; do
		[[ " $members " == *" $from "* && " $members " == *" $to "* ]] &&
			along="$along
    $at ($from/ -> $to/)"
	done <<<"$edges"
done <<<"$loop"
check layering-no-cycle "no cycle between vmm/'s folders${along:+:$along}" test -z "$along"

# the allowed upward edges: each still there (else it must leave KNOWN)
gone=
while read -r f t; do
	[ -n "$f" ] || continue
	case $f in *.o) [ -n "$calls_checked" ] || continue ;; esac
	[[ $used_known == *"
$f $t"* ]] || gone="$gone
  $f -> $t"
done <<<"$KNOWN"
n=$(printf '%s\n' "$KNOWN" | awk 'NF' | wc -l)
if [ "$n" -eq 0 ]; then known_said="no upward edge is excused (KNOWN is empty)"; else known_said="the $n known upward edges are all still there"; fi
check layering-known "$known_said${gone:+; gone, remove from KNOWN:$gone}" \
	test -z "$gone"
finish
