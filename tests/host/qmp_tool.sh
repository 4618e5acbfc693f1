#!/usr/bin/env bash
# hwpoison-guest --qmp against a real QEMU: the distro's qemu-system-x86_64
# under TCG on this host, booting our bzImage with no devices (its firmware
# copies the kernel to 1 MiB, so that page becomes present and QEMU's own;
# the tool waits for it, --wait-present). The GPA -> HVA comes from QEMU's monitor
# (gpa2hva over QMP), the PFN from pagemap, and it is written to a fake
# debugfs: a plain file, so nothing on this host is poisoned.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/tests/lib/check.sh"
tool=$here/build/hwpoison-guest
json_field=$here/build/json-field
pagemap_pfn=$here/build/pagemap-pfn
qemu=${QEMU:-qemu-system-x86_64}

if [ "$(id -u)" -ne 0 ]; then
	skip qmp-tool "not root: the tool reads PFNs from pagemap only as root"
	finish
fi
# A QMP socket whose listener never accepts, its backlog full (a QEMU that
# stopped answering): the tool's connect() once waited for ever; now it
# gives up after 10 s. The "QEMU" is a copy of sleep under QEMU's name (the
# tool checks the pid's exe before it connects). (issue #36)
qf=$(mktemp -d)
cp "$(command -v sleep)" "$qf/qemu-system-x86_64"
python3 "$here/tests/host/stall_peer.py" full "$qf/qmp" "$qf/ready" &
peer_pid=$!
"$qf/qemu-system-x86_64" 600 &
fake_pid=$!
n=0
while [ ! -e "$qf/ready" ] && kill -0 $peer_pid 2>/dev/null && [ $n -lt 300 ]; do
	sleep 0.1
	n=$((n + 1))
done
t0=$(date +%s)
out=$(timeout 30 "$tool" --qmp "$qf/qmp" --debugfs "$qf" $fake_pid 0x100000 2>&1)
rc=$? secs=$(($(date +%s) - t0))
kill $peer_pid $fake_pid 2>/dev/null
wait $peer_pid $fake_pid 2>/dev/null
rm -rf "$qf"
if [ $rc -eq 1 ] && [ $secs -le 15 ] && [[ $out == *"cannot connect to QMP socket"*"timed out"* ]]; then
	pass qmp-connect-bounded "a listener that never accepts: refused after ${secs}s ($out)"
else
	fail qmp-connect-bounded "exit $rc after ${secs}s (want 1 within 15 s, 'timed out'): $out"
fi

if ! command -v "$qemu" >/dev/null; then
	skip qmp-tool "no $qemu (make deps installs qemu-system-x86)"
	finish
fi
t=$(mktemp -d)
trap 'kill $qpid 2>/dev/null; rm -rf "$t"' EXIT
mkdir -p "$t/debugfs/hwpoison"
: >"$t/debugfs/hwpoison/corrupt-pfn"
"$qemu" -accel tcg -m 64 -nographic -nodefaults -display none \
	-kernel "$here/build/bzImage" -qmp "unix:$t/qmp,server=on,wait=off" \
	>"$t/qemu.out" 2>&1 &
qpid=$!
n=0
while [ ! -S "$t/qmp" ] && kill -0 $qpid 2>/dev/null && [ $n -lt 300 ]; do
	sleep 0.1
	n=$((n + 1))
done

out=$("$tool" --qmp "$t/qmp" --debugfs "$t/debugfs" --wait-present 120 $qpid 0x100000 2>&1)
rc=$?
echo "  $out"
check qmp-poison "QEMU's GPA 0x100000 (its copy of our kernel): exit 0, a poison line (got $rc)" \
	sh -c "[ $rc -eq 0 ] && printf '%s' '$out' | grep -q '\"gpa\":\"0x100000\"'"
hva=$("$json_field" - hva event=poison <<<"$out")
pfn=$("$json_field" - pfn event=poison <<<"$out")
# the PFN, read independently of the tool
want=$([ -n "$hva" ] && "$pagemap_pfn" $qpid "$hva" 2>&1)
check qmp-pfn "the PFN written ($(cat "$t/debugfs/hwpoison/corrupt-pfn")) is pagemap's for QEMU's hva $hva ($want)" \
	sh -c "[ -n '$pfn' ] && [ '$pfn' = '$want' ] && [ \$((\$(cat '$t/debugfs/hwpoison/corrupt-pfn'))) -eq \$(($want)) ]"
: >"$t/debugfs/hwpoison/corrupt-pfn"
expect qmp-not-ram 1 'has no RAM at GPA 0xfee00000' \
	"$tool" --qmp "$t/qmp" --debugfs "$t/debugfs" $qpid 0xfee00000
expect qmp-not-qemu 1 'is not a qemu-system-x86_64' \
	"$tool" --qmp "$t/qmp" --debugfs "$t/debugfs" $$ 0x100000
expect qmp-no-socket 1 'cannot connect to QMP socket' \
	"$tool" --qmp "$t/none" --debugfs "$t/debugfs" $qpid 0x100000
expect qmp-with-soak 2 'usage' "$tool" --qmp "$t/qmp" --soak 3 --log /dev/null $qpid 0x100000
check qmp-nothing-written "no refused request wrote a PFN" test ! -s "$t/debugfs/hwpoison/corrupt-pfn"
finish
