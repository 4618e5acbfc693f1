#!/usr/bin/env python3
"""Send commands to a QEMU human monitor on a unix socket; print the answers.

Usage: outer-qemu/monitor.py SOCKET COMMAND...   (each COMMAND one monitor line)
boot.sh uses it to look inside an outer VM that has gone silent: its CPUs'
registers and local APICs (is a timer armed?), then an NMI.
"""
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


def main():
    if len(sys.argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(20)
    try:
        s.connect(sys.argv[1])
        read_to_prompt(s)  # the banner
        for cmd in sys.argv[2:]:
            s.sendall(cmd.encode() + b"\n")
            out = read_to_prompt(s).decode(errors="replace").replace("\r", "")
            # the monitor echoes the command line first
            print(f"(qemu) {cmd}\n{out.split(chr(10), 1)[-1]}")
    except OSError as e:
        print(f"monitor.py: {sys.argv[1]}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
