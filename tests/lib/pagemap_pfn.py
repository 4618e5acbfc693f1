#!/usr/bin/env python3
"""The PFN behind a process's virtual address, read from /proc/PID/pagemap.

    pagemap_pfn.py PID HVA
    pagemap_pfn.py --pagemap FILE HVA    (a file in pagemap's format: fixtures)

Prints the PFN in hex (0x1234), the form hwpoison-guest reports and writes to
corrupt-pfn, so a check can compare the two as strings. HVA is hex (0x...) or
decimal; any address inside the page will do.

A host check asks "is the PFN the tool wrote the one pagemap shows?": an
answer that is not a PFN must not look like one. So each of these is a
message on stderr and exit 1, never a number on stdout:
  - no such process (or its pagemap cannot be read),
  - the page is not present (entry bit 63 clear: never touched, swapped out),
  - the PFN is hidden (present, but PFN 0: the kernel shows PFNs only to
    CAP_SYS_ADMIN, and PFN 0 is never a user page),
  - HVA past the end of the user address space (pagemap has no entry).
Bad arguments: usage on stderr, exit 2.

Entry layout (Documentation/admin-guide/mm/pagemap.rst): bits 0-54 the PFN,
55 soft-dirty, 56 exclusively mapped, 57 uffd-wp, 61 file page or shared
anon, 62 swapped, 63 present.

The outer VM has no python: the scenarios there read pagemap with dd and od
(tests/integration/scenarios/tool_safety.sh, compare.sh).
"""
import errno
import os
import struct
import sys

ENTRY_BYTES = 8
PFN_MASK = (1 << 55) - 1
PRESENT = 1 << 63
SWAPPED = 1 << 62


def usage(why):
    sys.stderr.write("pagemap_pfn.py: %s\n"
                     "usage: pagemap_pfn.py PID HVA | --pagemap FILE HVA\n" % why)
    sys.exit(2)


def fail(msg):
    sys.stderr.write("pagemap_pfn.py: %s\n" % msg)
    sys.exit(1)


def number(what, text):
    try:
        v = int(text, 16) if text.lower().startswith("0x") else int(text, 10)
    except ValueError:
        usage("%s '%s' is not a number (hex 0x... or decimal)" % (what, text))
    if v < 0:
        usage("%s '%s' is negative" % (what, text))
    return v


def read_entry(path, hva, who):
    page = os.sysconf("SC_PAGE_SIZE")
    try:
        with open(path, "rb") as f:
            f.seek(hva // page * ENTRY_BYTES)
            raw = f.read(ENTRY_BYTES)
    except OSError as e:
        if e.errno == errno.ENOENT:
            fail("no such process: %s (%s)" % (who, path))
        fail("cannot read %s: %s" % (path, e.strerror))
    except OverflowError:
        raw = b""
    if len(raw) != ENTRY_BYTES:
        fail("%s has no entry for %#x: past the end of the user address space" %
             (path, hva))
    return struct.unpack("<Q", raw)[0]


def main(argv):
    if len(argv) == 3 and argv[0] == "--pagemap":
        path, who = argv[1], argv[1]
        hva = number("HVA", argv[2])
    elif len(argv) == 2 and not argv[0].startswith("-"):
        pid = number("PID", argv[0])
        if pid == 0:
            usage("PID 0 is not a process")
        path, who = "/proc/%d/pagemap" % pid, "pid %d" % pid
        hva = number("HVA", argv[1])
    else:
        usage("want PID HVA or --pagemap FILE HVA")
    e = read_entry(path, hva, who)
    if not e & PRESENT:
        fail("%s: the page at %#x is not present (pagemap entry %#018x%s)" %
             (who, hva, e, ", swapped out" if e & SWAPPED else ""))
    pfn = e & PFN_MASK
    if pfn == 0:
        fail("%s: the page at %#x is present but its PFN is hidden (0): the kernel "
             "shows PFNs only to CAP_SYS_ADMIN" % (who, hva))
    print(hex(pfn))


if __name__ == "__main__":
    main(sys.argv[1:])
