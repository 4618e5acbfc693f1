# Sourced by scripts/stock-kernels.sh and scripts/peers.sh: the files they
# keep per Debian suite under DIR (the caller sets dir and prog), replaced
# only when they change, with DIR/.changed touched then (make's
# prerequisite for the compare image, so that it is rebuilt only when a
# suite moved).

# replace FILE : FILE.new over FILE when they differ
replace() {
	if cmp -s "$1.new" "$1"; then
		rm -f "$1.new"
	else
		mv "$1.new" "$1"
		touch "$dir/.changed"
	fi
}

# suite_unavailable SUITE RC WHAT FILE... : debian-suite.sh (WHAT: its
# command) failed with RC for SUITE, its stderr in DIR/SUITE/err. Exit 3
# (it cannot be had) leaves DIR/SUITE/unavailable with the reason instead
# of FILE...; any other status fails the caller.
suite_unavailable() {
	local suite=$1 rc=$2 what=$3 reason f
	shift 3
	reason=$(grep 'debian-suite: error' "$dir/$suite/err" | tail -n 1)
	[ -n "$reason" ] || reason="debian-suite.sh $what $suite failed with status $rc"
	echo "$prog: $suite: $reason" >&2
	[ "$rc" -eq 3 ] || { cat "$dir/$suite/err" >&2; exit 1; }
	echo "$reason" >"$dir/$suite/unavailable.new"
	replace "$dir/$suite/unavailable"
	for f in "$@"; do
		[ -e "$dir/$suite/$f" ] && touch "$dir/.changed"
		rm -f "$dir/$suite/$f"
	done
}

# suite_available SUITE : SUITE's files are there: no unavailable file
suite_available() {
	[ -e "$dir/$1/unavailable" ] && touch "$dir/.changed"
	rm -f "$dir/$1/unavailable" "$dir/$1/err"
}

mkdir -p "$dir"
[ -e "$dir/.changed" ] || touch "$dir/.changed"
