#!/usr/bin/env python3
"""Merge host-matrix result files into its tables.

Usage: tests/matrix/merge.py [--times] DIR... > docs/host-matrix.md

Reads every HOST/CASE.json under each DIR (tests/matrix/cell.py's result
files: from this machine's build/cells, or from CI jobs' artifacts, each
job one or more cells) and prints markdown: the hosts with the kernel each
cell ran, then one row per case (tests/matrix/host-matrix.table's order),
one column per host (stock beside ours: bookworm, 6.1, trixie, 6.12, sid,
7.2), each cell "pass N/S" (N checks passed, S skipped) or "FAIL N/F/S"
or "-" (not run); then, from the side-by-side cases (the compare
scenario's "HWLAB-MEASURE compare" lines, kept in the result files), one
row per event, guest and VMM (hwlab-vmm, QEMU 11.1, 10.0, 7.2): whether the
guest lived on each host; then each skip reason that names a missing host
feature, once per case. The output depends only on the result files' checks and
versions, never on when or where a cell ran (--times adds a table of the
cells' run times, which does), so that shards merged in any order make the
same tables. Two files for one cell: an error. Exit 1 when no result file
was found.
"""
import glob
import json
import os
import re
import sys

import cell  # tests/matrix/cell.py: the table's one reader

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from compare import fields_of  # noqa: E402 tests/compare.py: the compare lines' one reader

HOSTS = ("bookworm", "6.1", "trixie", "6.12", "sid", "7.2")
LACKS = re.compile(r"lacks (\S+) \((.*)\)$")


def table_cases():
    """(case, vmm, guest) of each row, in the table's order (cell.py reads it)."""
    return [(r["case"], r["vmm"], r["guest"]) for r in cell.table_rows().values()]


def outcome(m):
    """One compare line's outcome, short: lived|died (what the inner kernel did, the SIGBUS its process got), or no boot."""
    if "noboot" in m:
        return "no boot (" + m["noboot"].replace("_", " ") + ")"
    inner = m.get("inner", "?").replace("_", " ")
    sig = m.get("sigbus", "-").replace("BUS_MCEERR_", "")
    return f"{'lived' if m.get('survived') == 'yes' else '**died**'} ({inner}, {sig})"


def vmm_table(cells, hosts):
    """host x case x VMM: the compare scenario's outcome lines (the matrix's side-by-side cases)."""
    rows = {}
    for (h, case), r in cells.items():
        for line in r.get("compare", []):
            m = fields_of(line)
            if "vmm" not in m or "case" not in m or m.get("backing") or "guest" not in m:
                continue
            key = (case, m["case"], m["guest"], m["vmm"])
            rows.setdefault(key, {}).setdefault(h, []).append(outcome(m))
    if not rows:
        return []
    out = ["", "## The same poison under each VMM", "",
           "From the side-by-side cases (the `compare` scenario: hwlab-vmm and each QEMU driven by its "
           "own suite's libvirt, the same page poisoned from the outer debugfs): per guest and VMM, "
           "whether the guest lived, what its kernel did and the SIGBUS its process got.", "",
           "| matrix case | event | guest | VMM | " + " | ".join(hosts) + " |",
           "|---|---|---|---|" + "---|" * len(hosts)]
    for key in sorted(rows):
        cols = ["; ".join(rows[key][h]) if h in rows[key] else "-" for h in hosts]
        out.append("| " + " | ".join(key) + " | " + " | ".join(cols) + " |")
    return out


def main(argv):
    args = argv[1:]
    times = "--times" in args
    args = [a for a in args if a != "--times"]
    if not args:
        print("usage: tests/matrix/merge.py [--times] DIR...", file=sys.stderr)
        return 2
    cells = {}
    for d in args:
        for path in sorted(glob.glob(os.path.join(d, "*", "*.json"))):
            with open(path) as f:
                r = json.load(f)
            key = (r["host"], r["case"])
            if key in cells:
                print(f"merge: error: two results for {key[0]} {key[1]}: {cells[key]['_path']} and {path}",
                      file=sys.stderr)
                return 2
            r["_path"] = path
            cells[key] = r
    if not cells:
        print("merge: error: no result files (HOST/CASE.json) in " + " ".join(args), file=sys.stderr)
        return 1
    hosts = [h for h in HOSTS if any(k[0] == h for k in cells)]
    commits = sorted({r["commit"] for r in cells.values()})
    out = ["# The host matrix", "",
           "Made by `tests/matrix/merge.py` from the result files of "
           f"{len(cells)} cells (`make cell HOST=... CASE=...`, `make host-matrix`), run at "
           f"commit{'s' if len(commits) > 1 else ''} {', '.join(commits)}; "
           "each cell is one outer-VM boot of the case's scenario on that host "
           "(`docs/hosts.md`). A cell reads `pass P/S` (P checks passed, S skipped) or "
           "`FAIL P/F/S`; `-`: not run.", "",
           "## Hosts", "", "| host | kind | kernel package | uname -r | features (kernel/features) |",
           "|---|---|---|---|---|"]
    for h in hosts:
        r = next(cells[k] for k in sorted(cells) if k[0] == h)
        fields = r["host_version"].split()
        kind = fields[1] if len(fields) > 1 else "?"
        package = " ".join(fields[2:]) if len(fields) > 2 else "?"
        unames = sorted({cells[k]["kernel"] or "?" for k in cells if k[0] == h})
        out.append(f"| {h} | {kind} | {package} | {', '.join(unames)} | {', '.join(r['host_features']) or '-'} |")
    out += ["", "## Cases", "", "| case | VMM | guest | " + " | ".join(hosts) + " |",
            "|---|---|---|" + "---|" * len(hosts)]
    reasons = {}
    for case, vmm, guest in table_cases():
        row = []
        for h in hosts:
            r = cells.get((h, case))
            if r is None:
                row.append("-")
                continue
            if r["result"] == "pass":
                row.append(f"pass {r['passed']}/{r['skipped']}")
            else:
                why = "" if r["boot_status"] in ("ok", "checks failed") else f" ({r['boot_status']})"
                row.append(f"**FAIL** {r['passed']}/{r['failed']}/{r['skipped']}{why}")
            for c in r["checks"]:
                m = LACKS.search(c["text"]) if c["status"] == "SKIP" else None
                if m:
                    reasons.setdefault(case, set()).add(f"{m.group(1)} ({m.group(2)})")
        if any(x != "-" for x in row):
            out.append(f"| {case} | {vmm} | {guest} | " + " | ".join(row) + " |")
    out += vmm_table(cells, hosts)
    if reasons:
        out += ["", "## Skipped for a missing host feature", ""]
        for case in (c[0] for c in table_cases()):
            if case in reasons:
                out.append(f"- {case}: " + "; ".join(sorted(reasons[case])))
    if times:
        out += ["", "## Run times (seconds; not part of the merge's equality)", "",
                "| case | " + " | ".join(hosts) + " |", "|---|" + "---|" * len(hosts)]
        for case in (c[0] for c in table_cases()):
            row = [str(cells[(h, case)]["seconds"]) if (h, case) in cells else "-" for h in hosts]
            if any(x != "-" for x in row):
                out.append(f"| {case} | " + " | ".join(row) + " |")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
