#!/usr/bin/env bash
# How often does the outer VM freeze (boot.sh's exit 126) in one scenario,
# with and without a boot.sh setting? The two arms run side by side,
# one boot of each at a time, so both see the same host load.
#
# Usage: outer-qemu/freeze-rate.sh SCENARIO RUNS [ENV_B] [HOGS]
#   arm A boots as make test does (or as the environment says), arm B with
#   ENV_B, blank-separated VAR=value settings for boot.sh; HOGS busy loops
#   run beside both (default 0). Logs: build/logs/freeze-rate/{a,b}-N.log.
#   The outer VM's known freeze, the one-shot tick that host QEMU can lose
#   (boot.sh, docs/design.md), against its cure:
#     HWLAB_HIGHRES=on outer-qemu/freeze-rate.sh compare 1 HWLAB_HIGHRES=off
# Prints one line per boot ("a 3 rc=0 41s") and a summary per arm:
#   freeze-rate: a: 1 frozen of 10 (other failures 0); b: ...
# HWLAB_SILENCE and HWLAB_NMI_WAIT (boot.sh) shorten the wait for a verdict.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
scenario=${1:?usage: freeze-rate.sh SCENARIO RUNS [ENV_B] [HOGS]}
runs=${2:?usage: freeze-rate.sh SCENARIO RUNS [ENV_B] [HOGS]}
env_b=${3:-}
hogs=${4:-0}
dir=$here/build/logs/freeze-rate
rm -rf "$dir"; mkdir -p "$dir"

hog_pids=()
trap 'kill "${hog_pids[@]}" 2>/dev/null' EXIT
for _ in $(seq "$hogs"); do
	( while :; do :; done ) &
	hog_pids+=($!)
done

boot_one() { # ARM N ENV: one boot; prints its line into $dir/ARM-N.rc
	local t0=$SECONDS rc
	# shellcheck disable=SC2086 # ENV is a list of VAR=value words
	env $3 "$here/outer-qemu/boot.sh" "$scenario" "$dir/$1-$2.log" >/dev/null 2>&1
	rc=$?
	echo "$1 $2 rc=$rc $((SECONDS - t0))s" | tee "$dir/$1-$2.rc"
}

for n in $(seq "$runs"); do
	boot_one a "$n" "" &
	a=$!
	boot_one b "$n" "$env_b" &
	wait "$a" $!
done

summary() { # ARM
	local frozen other
	frozen=$(cat "$dir/$1"-*.rc | grep -c ' rc=126 ')
	other=$(cat "$dir/$1"-*.rc | grep -vc -e ' rc=126 ' -e ' rc=0 ')
	echo "$1: $frozen frozen of $runs (other failures $other)"
}
echo "freeze-rate: $scenario, $hogs hog(s); $(summary a); $(summary b) with '$env_b'"
