#!/usr/bin/env python3
"""Read a TCG vCPU's hidden interrupt state out of host QEMU's memory.

Usage: outer-qemu/tcg_flags.py PID RIP RSP

A frozen outer VM (boot.sh's watch_silence) shows a halted CPU with IF set
and a vector pending in its APIC. Whether the CPU could take it is not in
any monitor command's output: that is TCG's hflags2 (GIF, NMI blocking,
V_INTR masking and the host IF latched at VMRUN, virtual GIF) and hflags
(in SVM guest mode, interrupt shadow). With GIF set and nothing masked, as
every freeze seen here showed (hflags2=0x1), the interrupt request itself
was lost: the one-shot tick boot.sh no longer uses. This finds the vCPU's
CPUX86State in the QEMU process by the registers the monitor printed (RSP
at regs[4], RIP at eip, 8-byte aligned, QEMU 7.2's layout: regs[16], eip,
eflags, cc_dst, cc_src, cc_src2, cc_op, df, hflags, hflags2) and decodes
those words. Needs ptrace rights over PID (root). Prints one line per
match; exit 1 if there is none.
"""
import re
import struct
import sys

HF = {3: "INHIBIT_IRQ", 19: "SMM", 21: "GUEST(SVM)"}
HF2 = {0: "GIF", 1: "HIF", 2: "NMI_BLOCKED", 3: "VINTR_MASKING", 4: "SMM_INSIDE_NMI",
       6: "NPT", 8: "VGIF"}
# offsets in CPUX86State (target/i386/cpu.h, QEMU 7.2)
OFF_RSP, OFF_EIP, OFF_EFLAGS, OFF_HFLAGS, OFF_HFLAGS2 = 4 * 8, 128, 136, 176, 180
# guest RAM is one large mapping; the vCPU state is in QEMU's own heap
MAX_MAPPING = 256 << 20


def bits(word, names):
    on = [name for bit, name in sorted(names.items()) if word >> bit & 1]
    return "|".join(on) or "none"


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__.split("\n\n")[1])
    pid = int(sys.argv[1])
    rip, rsp = int(sys.argv[2], 16), int(sys.argv[3], 16)
    needle = struct.pack("<Q", rsp)
    found = 0
    with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", 0) as mem:
        for line in maps:
            m = re.match(r"([0-9a-f]+)-([0-9a-f]+) rw", line)
            if not m:
                continue
            start, end = int(m.group(1), 16), int(m.group(2), 16)
            if end - start > MAX_MAPPING:
                continue
            try:
                mem.seek(start)
                data = mem.read(end - start)
            except OSError:
                continue
            at = data.find(needle)
            while at >= 0:
                base = at - OFF_RSP
                if base >= 0 and base % 8 == 0 and base + OFF_HFLAGS2 + 4 <= len(data) and \
                        struct.unpack_from("<Q", data, base + OFF_EIP)[0] == rip:
                    eflags = struct.unpack_from("<Q", data, base + OFF_EFLAGS)[0]
                    hflags, hflags2 = struct.unpack_from("<II", data, base + OFF_HFLAGS)
                    print(f"tcg_flags: env at {start + base:#x}: eflags={eflags:#x} "
                          f"(IF={eflags >> 9 & 1}) hflags={hflags:#x} ({bits(hflags, HF)}) "
                          f"hflags2={hflags2:#x} ({bits(hflags2, HF2)})")
                    found += 1
                at = data.find(needle, at + 1)
    if not found:
        print(f"tcg_flags: no CPUX86State with RIP={rip:#x} RSP={rsp:#x} in pid {pid}")
    return 0 if found else 1


if __name__ == "__main__":
    sys.exit(main())
