#!/usr/bin/env python3
"""A migration peer that stalls, for tests/host/vmm_runs/bounds.sh.

  stall_peer.py send PATH N READY   connect to the listener at PATH, send the
                                    first N bytes of a valid state stream
                                    header (16: all of it), write READY, and
                                    hold the connection without a further byte
  stall_peer.py sink PATH READY     listen at PATH, write READY, accept one
                                    connection (then write READY.accepted) and
                                    never read from it
  stall_peer.py full PATH READY     listen at PATH and never accept, with the
                                    backlog full (a connect() to it cannot
                                    complete), then write READY
  stall_peer.py lock DIR READY      hold an exclusive flock() of the directory
                                    DIR (the VMMs' private one), write READY

Either way it then waits until it is killed.
"""
import fcntl
import os
import signal
import socket
import struct
import sys

HEADER = b"HWLABVM\n" + struct.pack("<II", 1, 16)


def ready(path):
    with open(path + ".tmp", "w") as f:
        f.write("ready\n")
    os.rename(path + ".tmp", path)


def main():
    mode, path, arg = sys.argv[1], sys.argv[2], sys.argv[3:]
    held = []
    if mode == "send":
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(path)
        s.sendall(HEADER[:int(arg[0])])
        held.append(s)
        ready(arg[1])
    elif mode == "full":
        lst = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        lst.bind(path)
        lst.listen(0)
        held.append(lst)
        # fill the backlog until a non-blocking connect is refused with EAGAIN
        while True:
            c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            c.setblocking(False)
            try:
                c.connect(path)
            except BlockingIOError:
                c.close()
                break
            held.append(c)
        ready(arg[0])
    elif mode == "sink":
        lst = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        lst.bind(path)
        lst.listen(1)
        ready(arg[0])
        conn, _ = lst.accept()
        held += [lst, conn]
        ready(arg[0] + ".accepted")
    elif mode == "lock":
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        fcntl.flock(fd, fcntl.LOCK_EX)
        held.append(fd)
        ready(arg[0])
    else:
        sys.exit("usage: stall_peer.py send PATH N READY | sink PATH READY | full PATH READY | "
                 "lock DIR READY")
    while True:
        signal.pause()


if __name__ == "__main__":
    main()
