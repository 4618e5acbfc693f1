#!/usr/bin/env python3
"""Send commands to a QEMU human monitor on a unix socket; print the answers.

Usage: outer-qemu/monitor.py [--symbols System.map] SOCKET COMMAND...
(each COMMAND one monitor line). boot.sh uses it to look inside an outer VM
that has gone silent: its CPUs' registers, local APICs (is a timer armed?)
and CPU 0's stack, then an NMI. With --symbols, every kernel text address
in the answers is followed by its symbol+offset, so that a stack dump reads
as a backtrace (a hung kernel cannot print its own).
"""
import bisect
import re
import socket
import sys

PROMPT = b"(qemu) "


def read_to_prompt(s):
    data = b""
    while not data.endswith(PROMPT):
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    return data[:-len(PROMPT)] if data.endswith(PROMPT) else data


def load_symbols(path):
    syms = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3 and parts[1] in "tTwW":
                syms.append((int(parts[0], 16), parts[2]))
    syms.sort()
    return syms


def annotate(text, syms):
    """Append <symbol+0xoff> to each word that is a kernel text address."""
    if not syms:
        return text
    addrs = [a for a, _ in syms]

    def name(m):
        x = int(m.group(1), 16)
        i = bisect.bisect_right(addrs, x) - 1
        if i < 0 or x - addrs[i] > 0x10000:
            return m.group(0)
        return f"{m.group(0)} <{syms[i][1]}+{x - addrs[i]:#x}>"
    return re.sub(r"\b(?:0x)?(ffffffff8[0-9a-f]{7})\b", name, text)


def main():
    args = sys.argv[1:]
    syms = []
    if len(args) >= 2 and args[0] == "--symbols":
        try:
            syms = load_symbols(args[1])
        except OSError as e:
            print(f"monitor.py: {args[1]}: {e}", file=sys.stderr)
        args = args[2:]
    if len(args) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    sys.argv[1:] = args
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(20)
    try:
        s.connect(sys.argv[1])
        read_to_prompt(s)  # the banner
        for cmd in sys.argv[2:]:
            s.sendall(cmd.encode() + b"\n")
            out = read_to_prompt(s).decode(errors="replace").replace("\r", "")
            # the monitor echoes the command line first
            print(f"(qemu) {cmd}\n{annotate(out.split(chr(10), 1)[-1], syms)}")
    except OSError as e:
        print(f"monitor.py: {sys.argv[1]}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
