# tests/host/vmm_runs.sh, issue #36 N6: a state stream is the peer's text as
# much as its numbers. migrate.sh's snapshot with its devices section
# rewritten (checksums and the end section's counts made right again, so
# the reader gets past them) to a record whose name is ESC [ 2 J, a newline
# and a fake "restored" line: the restore is refused, and what reaches the
# operator's terminal is one escaped line, no control byte. Sourced by
# vmm_runs.sh after migrate.sh: its $tmp/guest.snap, $vmm, $guest, $tmp.
# shellcheck shell=bash

# restream_devices IN OUT: IN with its devices section replaced by one
# record named ESC [2J \n "hwlab-vmm: restore ok"
restream_devices() {
	python3 - "$1" "$2" <<'PY'
import struct, sys

def crc32c(data, crc=0):
    crc ^= 0xffffffff
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82f63b78 if crc & 1 else crc >> 1
    return crc ^ 0xffffffff

src = open(sys.argv[1], 'rb').read()
out, at, sections, total = [src[:16]], 16, 0, 0
while at < len(src):
    magic, kind, zero, n, crc = struct.unpack_from('<IHHII', src, at)
    payload = src[at + 16:at + 16 + n]
    at += 16 + n
    if kind == 2:
        payload = b'\x1b[2J\nhwlab-vmm: restore ok\x00' + struct.pack('<I', 0)
    if kind == 0xffff:
        payload = struct.pack('<IIQ', sections, 0, total)
    else:
        sections, total = sections + 1, total + len(payload)
    head = struct.pack('<HHI', kind, zero, len(payload))
    out.append(struct.pack('<I', magic) + head +
               struct.pack('<I', crc32c(payload, crc32c(head))) + payload)
open(sys.argv[2], 'wb').write(b''.join(out))
PY
}

if [ ! -s "$tmp/guest.snap" ] || ! command -v python3 >/dev/null; then
	skip "${pfx}restore-hostile-name" "no snapshot from migrate.sh, or no python3"
else
	restream_devices "$tmp/guest.snap" "$tmp/hostile.snap"
	timed 20 --vcpus 2 --passes 2 --restore "$tmp/hostile.snap" "$guest" >"$tmp/hostile.out"
	hostile_rc=$?
	# the refusal, and on the whole output (the report lines too) no
	# control byte but the lines' ends
	if [ "$hostile_rc" -eq 1 ] && grep -qF "no device '\\x1b[2J\\x0ahwlab-vmm: restore ok' here to restore" "$tmp/hostile.out" &&
		! tr -d '\n' <"$tmp/hostile.out" | LC_ALL=C grep -q '[[:cntrl:]]'; then
		pass "${pfx}restore-hostile-name" "exit $hostile_rc; the stream's device name escaped on one line: $(grep -a 'no device' "$tmp/hostile.out")"
	else
		fail "${pfx}restore-hostile-name" "exit $hostile_rc: $(grep -a 'device' "$tmp/hostile.out" | cat -v | tr '\n' ' ')"
	fi
fi
