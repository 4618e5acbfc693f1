#!/usr/bin/env bash
# No pipe whose reader may stop early in a script that runs under pipefail.
# "ldd X | grep -q Y": grep exits at its first match, ldd's next write then
# gets SIGPIPE, and pipefail makes the whole pipeline fail although Y was
# there (2 of 3 make initramfs on a loaded machine failed so). The same for
# head, sed ...q, awk ...exit, read, and grep -m/-l or to /dev/null (GNU grep
# stops at the first match there too), after any writer: whether the writer
# is done before the reader stops depends on timing and buffer sizes.
# Checked: every tracked script that sets pipefail, and the libraries in
# tests/lib/ they source. Scenario scripts run under busybox ash without
# pipefail, and a "sh -c '...'" is a shell without it: not checked.
# Capture the output and match that instead ([[ $(ldd X) == *Y* ]], a
# here-string, awk or sed -n that read to the end).
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/tests/lib/check.sh"

# lint FILE...: FILE:LINE: the logical line (continuations joined) of each
# pipeline with such a reader after its first command
lint() {
	awk '
	# an exit before its END block: awk stops reading there
	function awk_exits_early(st) {
		sub(/END[ \t]*\{.*/, "", st)
		return st ~ /exit/
	}
	function stage_stops_early(st) {
		sub(/^[ \t]*/, "", st)
		return st ~ /^(grep|egrep|fgrep)[ \t]+(-[a-zA-Z]*[qml]|--quiet|--max-count|--files-with)/ ||
		       st ~ /^(grep|egrep|fgrep)[^|;&]*>[ \t]*\/dev\/null/ ||
		       st ~ /^head([ \t]|$)/ ||
		       (st ~ /^sed[ \t]/ && st ~ /[ \t\047";{}\/0-9$]q([ \t\047";})]|$)/) ||
		       (st ~ /^awk[ \t]/ && awk_exits_early(st)) ||
		       st ~ /^read([ \t]|$)/
	}
	function check(   n, i, stages) {
		if (buf == "" || buf ~ /(^|[ \t])(ba)?sh[ \t]+-c[ \t]/)
			return
		# stages: split at a single |, not at ||
		n = split(buf, stages, /[^|]\|[^|]/)
		for (i = 2; i <= n; i++)
			if (stage_stops_early(stages[i])) {
				printf "%s:%d: %s\n", FILENAME, start, buf
				return
			}
	}
	FNR == 1 { check(); buf = "" }
	{
		l = $0
		if (buf == "")
			start = FNR
		if (l ~ /^[ \t]*#/)
			next
		if (l ~ /\\$/) {
			sub(/\\$/, "", l)
			buf = buf l " "
			next
		}
		if (l ~ /(\||&&)[ \t]*$/ && l !~ /\|\|[ \t]*$/) {
			buf = buf l " "
			next
		}
		buf = buf l
		check()
		buf = ""
	}
	END { check() }
	' "$@"
}

# the check finds what it is for: the pipelines it was written after
sample=$(mktemp)
trap 'rm -f "$sample"' EXIT
cat >"$sample" <<'SAMPLE'
set -o pipefail
ldd "$busybox" 2>&1 | grep -q 'not a dynamic' || die
file -L "$busybox" 2>/dev/null |
	grep -qx 'statically linked' || die
driver=$(ls /usr/lib/*/x.so 2>/dev/null | head -n 1)
from=$(sed -n 's/^From: //p' "$f" | sed q)
if printf '%s\n' "$paths" | grep 'x' >/dev/null; then :; fi
ok=$(grep -c x "$f" | tr -d ' ')
[[ $(ldd "$busybox" 2>&1) == *'not a dynamic'* ]] || grep -q x "$f" || die
SAMPLE
found=$(lint "$sample" | tee "$sample.out" | wc -l)
sed 's/^/  | /' "$sample.out"
rm -f "$sample.out"
check pipefail-lint-finds "the lint flags 5 early-stopping readers in its sample, and nothing else (got $found)" \
	test "$found" -eq 5

scripts=()
while read -r f; do
	case $f in
	# this file's sample (a heredoc) holds the very pipelines it looks for
	tests/host/pipefail_lint.sh) ;;
	tests/lib/*.sh) scripts+=("$f") ;;
	*) grep -q 'pipefail' "$here/$f" && scripts+=("$f") ;;
	esac
done < <(cd "$here" && { git ls-files '*.sh' '.ci/*' 2>/dev/null ||
	find . -name '*.sh' -not -path './build/*' | sed 's|^\./||'; } | sort -u)
bad=$(cd "$here" && lint "${scripts[@]}")
if [ ${#scripts[@]} -lt 10 ]; then
	fail pipefail-lint "found only ${#scripts[@]} scripts under pipefail to check"
elif [ -z "$bad" ]; then
	pass pipefail-lint "no pipe with an early-stopping reader in the ${#scripts[@]} scripts under pipefail"
else
	fail pipefail-lint "a reader that stops early under pipefail (capture the output and match it): $(
		tr '\n' ';' <<<"$bad")"
fi
finish
