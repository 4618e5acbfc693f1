#!/usr/bin/env python3
"""Run one cell of the host matrix and write its result file.

Usage: tests/matrix/cell.py HOST CASE [--out DIR]

HOST is an outer kernel (scripts/host-kernel.sh: 6.1, 6.12, 7.2 ours, or
bookworm, trixie, sid Debian's stock; build/hosts/HOST must exist: make
host-kernel HOST=...), CASE a row of tests/matrix/host-matrix.table. The
cell boots the row's scenario on that host (outer-qemu/boot.sh with
HWLAB_HOST), keeps its console log as DIR/HOST/CASE.log and writes
DIR/HOST/CASE.json (default DIR: build/cells): the host, its kernel's
package and version and features, the case, its VMM and guest, every
HWLAB-CHECK line, the counts, the boot's exit status, the log's sha256, the
project commit and when and how long it ran. Nothing else is shared
between cells, so any number of them can run at once, on any machines,
and tests/matrix/merge.py makes the tables from the files alone.

Exit status: 0 if the scenario passed (no failed check, exit 0), 1 if it
ran and failed, 2 on a bad usage or a host not built.
"""
import datetime
import hashlib
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TABLE = os.path.join(HERE, "host-matrix.table")
HOSTS = ("bookworm", "6.1", "trixie", "6.12", "sid", "7.2")
CHECK = re.compile(r"^HWLAB-CHECK (PASS|FAIL|SKIP) (\S+?): (.*)$")
BOOT_STATUS = {124: "hung", 125: "stopped without a result (panic?)", 126: "frozen emulator",
               2: "bad environment"}


def die(msg, code=2):
    print(f"cell: error: {msg}", file=sys.stderr)
    sys.exit(code)


def table_rows():
    rows = {}
    with open(TABLE) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            fields = line.split()
            if len(fields) != 5:
                die(f"{TABLE}: a row needs 5 columns: {line!r}")
            case, vmm, guest, scenario, append = fields
            rows[case] = {"case": case, "vmm": vmm, "guest": guest, "scenario": scenario,
                          "append": "" if append == "-" else append.replace(",", " ")}
    return rows


def read(path, default=""):
    try:
        with open(path, errors="replace") as f:
            return f.read().strip()
    except OSError:
        return default


def commit():
    def git(*args):
        return subprocess.run(["git", "-C", ROOT, *args], capture_output=True, text=True).stdout.strip()
    head = git("rev-parse", "--short=12", "HEAD") or "unknown"
    return head + ("-dirty" if git("status", "--porcelain", "--untracked-files=no") else "")


def parse_log(path):
    checks, kernel, host_line, rc, compare = [], None, None, None, []
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            m = CHECK.match(line)
            if m:
                checks.append({"status": m.group(1), "name": m.group(2), "text": m.group(3)})
            elif line.startswith("HWLAB-MEASURE compare "):
                # the side-by-side's outcome per guest, VMM and event (merge.py's VMM table)
                compare.append(line[len("HWLAB-MEASURE compare "):])
            elif line.startswith("HWLAB-BEGIN "):
                m = re.search(r"kernel=(\S+)", line)
                kernel = m.group(1) if m else None
            elif line.startswith("HWLAB-HOST "):
                host_line = line[len("HWLAB-HOST "):]
            elif line.startswith("HWLAB-EXIT "):
                m = re.search(r"rc=(\d+)", line)
                rc = int(m.group(1)) if m else None
    return checks, kernel, host_line, rc, compare


def main(argv):
    args = argv[1:]
    out_dir = os.path.join(ROOT, "build", "cells")
    if "--out" in args:
        i = args.index("--out")
        if i + 1 >= len(args):
            die("--out needs a directory")
        out_dir = args[i + 1]
        del args[i:i + 2]
    if len(args) != 2:
        die("usage: tests/matrix/cell.py HOST CASE [--out DIR]")
    host, case = args
    if host not in HOSTS:
        die(f"HOST must be one of {', '.join(HOSTS)}, not {host!r}")
    rows = table_rows()
    if case not in rows:
        die(f"CASE must be a row of tests/matrix/host-matrix.table ({', '.join(rows)}), not {case!r}")
    row = rows[case]
    host_dir = os.path.join(ROOT, "build", "hosts", host)
    if not os.path.isfile(os.path.join(host_dir, "features")):
        die(f"no {host_dir}/features: run 'make host-kernel HOST={host}' first")

    cell_dir = os.path.join(out_dir, host)
    os.makedirs(cell_dir, exist_ok=True)
    log = os.path.join(cell_dir, f"{case}.log")
    env = dict(os.environ, HWLAB_HOST=host)
    env["HWLAB_APPEND"] = " ".join(x for x in (row["append"], os.environ.get("HWLAB_APPEND", "")) if x)
    started = datetime.datetime.now(datetime.timezone.utc)
    t0 = time.monotonic()
    boot = subprocess.run([os.path.join(ROOT, "outer-qemu", "boot.sh"), row["scenario"], log], env=env)
    seconds = round(time.monotonic() - t0, 1)
    checks, kernel, host_line, exit_rc, compare = (parse_log(log) if os.path.exists(log)
                                                   else ([], None, None, None, []))
    counts = {s: sum(1 for c in checks if c["status"] == s) for s in ("PASS", "FAIL", "SKIP")}
    with open(log, "rb") as f:
        log_sha = hashlib.sha256(f.read()).hexdigest()
    ok = boot.returncode == 0 and counts["FAIL"] == 0 and checks != []
    result = {
        "schema": 1,
        "host": host,
        "host_version": read(os.path.join(host_dir, "version")),
        "host_features": read(os.path.join(host_dir, "features")).split(),
        "kernel": kernel,
        "host_line": host_line,
        "case": case,
        "scenario": row["scenario"],
        "vmm": row["vmm"],
        "guest": row["guest"],
        "guest_kernel_key": read(os.path.join(ROOT, "build", "kernel.key")) if row["guest"] == "ours" else None,
        "append": row["append"],
        "boot_rc": boot.returncode,
        "boot_status": "ok" if boot.returncode == 0 else BOOT_STATUS.get(boot.returncode, "checks failed"),
        "exit_rc": exit_rc,
        "result": "pass" if ok else "fail",
        "passed": counts["PASS"],
        "failed": counts["FAIL"],
        "skipped": counts["SKIP"],
        "checks": checks,
        "compare": compare,
        "log": os.path.relpath(log, ROOT),
        "log_sha256": log_sha,
        "commit": commit(),
        "started": started.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "seconds": seconds,
        "cpus": os.cpu_count(),
    }
    tmp = os.path.join(cell_dir, f".{case}.json.tmp")
    with open(tmp, "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, os.path.join(cell_dir, f"{case}.json"))
    print(f"cell {host} {case}: {result['result']} ({counts['PASS']} passed, {counts['FAIL']} failed, "
          f"{counts['SKIP']} skipped; {seconds} s; {os.path.relpath(log, ROOT)})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
