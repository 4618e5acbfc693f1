#!/usr/bin/env bash
# make fuzz's seed corpus, written at build time: the real guest image and a
# few cut from it for the ELF loader, and one ucall of every command for the
# ucall decoder (input: the 4-byte GPA, then guest RAM; see fuzz_ucall.c).
# The bzImage parser starts from the real kernel's first 64 KiB, when built.
# The restore's seeds are valid streams of its two machines, written by the
# fuzz target itself (fuzz_stream_restore.c: snapshot_save_state() on them);
# the watch's are request lines.
# Usage: tests/fuzz/seeds.sh OUTDIR GUEST.elf [BZIMAGE [FUZZ-STREAM-RESTORE]]
set -euo pipefail
out=$1 guest=$2 bzimage=${3:-} restore=${4:-}
mkdir -p "$out/elf-load" "$out/ucall" "$out/bzimage" "$out/stream-restore" "$out/watch-request"
if [ -x "$restore" ]; then
	HWLAB_FUZZ_WRITE_SEEDS=$out/stream-restore "$restore" >/dev/null
fi
printf 'poison 0x19a5000\n' >"$out/watch-request/poison"
printf 'poison 4096\r\n' >"$out/watch-request/poison-crlf"
printf 'save /var/lib/hwlab/guest.save\n' >"$out/watch-request/save"
printf 'quit\n' >"$out/watch-request/quit"
printf 'poison 0x1000\n\nsave /tmp/a "b"\\c\nbogus\nquit\n' >"$out/watch-request/session"
if [ -f "$bzimage" ]; then
	head -c 65536 "$bzimage" >"$out/bzimage/head"
	head -c 1024 "$bzimage" >"$out/bzimage/setup-only"
fi
cp "$guest" "$out/elf-load/guest.elf"
head -c 64 "$guest" >"$out/elf-load/header-only"
head -c 4096 "$guest" >"$out/elf-load/first-page"

# bytes N COUNT: the low COUNT bytes of N, little-endian
bytes() {
	local i
	for ((i = 0; i < $2; i++)); do
		printf "$(printf '\\x%02x' $(($1 >> 8 * i & 255)))"
	done
}
u64() { bytes "$1" 8; }
# ucall CMD MSG: a struct hwlab_ucall at GPA 0x10, in 512 bytes of RAM
ucall() {
	bytes 16 4
	head -c 16 /dev/zero
	u64 "$1"
	u64 0x523000; u64 1; u64 0xbd80000000000134; u64 7; u64 9
	printf '%s' "${2:0:95}"
	head -c $((96 - ${#2} + 512 - 16 - 144)) /dev/zero
}
ucall 1 'guest up, #MC handler installed, CR4.MCE set' >"$out/ucall/log"
ucall 2 '' >"$out/ucall/retired"
ucall 3 '' >"$out/ucall/pass"
ucall 4 '' >"$out/ucall/done"
ucall 5 'guest/guest.c:341: failing on request (--guest-fail-test)' >"$out/ucall/fail"
ucall 6 '' >"$out/ucall/unknown"
