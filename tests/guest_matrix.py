#!/usr/bin/env python3
"""The guest matrix's table (make guest-matrix; make test runs its quick form).

Usage: tests/guest_matrix.py [--markdown] build/logs/guest_matrix.log

Reads the guest_matrix scenario's "HWLAB-MEASURE guest-matrix kernel=K
cell=C key=value..." lines (all from one outer-VM boot) and the check lines
named after them, and prints one row per guest kernel (our bzImage, then
Debian bookworm, trixie, sid) with its version, its boot time to the inner
/init in hwlab-vmm and in sid's QEMU (the median of the boot samples
taken in turn, the guest's median uptime at /init, each sample) and the
check K-boot-parity, and for each case whether hwlab-vmm's
guest recovered (every check of that cell passed), with the time from the
corrupt-pfn write to the guest's own record of isolating the page. A cell
the run did not reach prints "-"; one that failed prints "FAIL". Exit 1 if
the log has no matrix lines, 2 on a bad usage.
"""
import re
import sys

MEASURE = re.compile(r"^HWLAB-MEASURE guest-matrix kernel=(\S+) cell=(\S+) (.*)$")
CHECK = re.compile(r"^HWLAB-CHECK (PASS|FAIL|SKIP) (\S+?): (.*)$")
PAIR = re.compile(r'(\w+)=("[^"]*"|\S+)')
KERNELS = ("ours", "bookworm", "trixie", "sid")
# (cell, column title, the time to show beside "recovered")
CASES = [
    ("late", "late kill (AR)", "isolated_ms"),
    ("early-tuned-1s", "early kill (AO), poll 1 s", "isolated_ms"),
    ("early-default-poll", "early kill (AO), default poll", "isolated_ms"),
    ("smp", "two vCPUs", None),
    ("salvage", "hugetlb RAM, shared: 2 MiB lost, salvaged", "salvage_ms"),
    ("smca", "early kill (AO), SMCA, default poll", "acted_median_ms"),
    ("hugetlb", "hugetlb RAM, private: 2 MiB lost, 512 pages told", "spread_ms"),
]


def parse(path):
    cells = {}
    checks = {}
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            m = MEASURE.match(line)
            if m:
                kv = {k: v.strip('"') for k, v in PAIR.findall(m.group(3))}
                key = (m.group(1), m.group(2), kv.get("vmm", "hwlab"))
                cells[key] = kv
                continue
            m = CHECK.match(line)
            if m:
                checks.setdefault(m.group(2), []).append(m.group(1))
    return cells, checks


def case_state(kernel, cell, checks):
    """PASS when every check of the cell passed, FAIL if one failed, None if none ran."""
    if cell.startswith("early-"):
        prefix = f"{kernel}-{cell}-"
    else:
        prefix = f"{kernel}-{cell.replace('hugetlb', 'huge')}-"
    got = [r for name, rs in checks.items() if name.startswith(prefix) and "-ras-" not in name
           for r in rs]
    if not got or all(r == "SKIP" for r in got):
        return None
    return "FAIL" if "FAIL" in got else "PASS"


def ras_state(kernel, checks):
    got = [r for name, rs in checks.items() if name.startswith(kernel + "-") and "-ras-" in name
           for r in rs]
    if not got:
        return "-"
    if "FAIL" in got:
        return "FAIL"
    if all(r == "SKIP" for r in got):
        return "skipped"
    return f"records ({got.count('PASS')} checks)"


def seconds(ms):
    """"12345" as "12.3", ">240000" as ">240.0", "none" as "none"."""
    if ms.startswith(">"):
        return ">" + seconds(ms[1:])
    return ms if not ms.isdigit() else f"{int(ms) / 1000:.1f}"


def boot(cells, kernel, vmm):
    """The median time to the inner /init, the guest's median uptime there and the samples."""
    kv = cells.get((kernel, "boot", vmm))
    if not kv:
        return "-"
    if kv.get("to_init_ms", "none") == "none":
        return "no boot: " + kv.get("reason", "?")
    out = f"{seconds(kv['to_init_ms'])} s"
    if kv.get("guest_uptime_ms"):
        out += f" (uptime {seconds(kv['guest_uptime_ms'])} s)"
    if kv.get("samples"):
        out += " of " + ", ".join(seconds(m) for m in kv["samples"].split(","))
    if kv.get("kvm_exits", "none") != "none":
        out += f"; {int(kv['kvm_exits']):,} KVM exits"
        if kv.get("vmm_exits", "none") != "none":
            out += f", {int(kv['vmm_exits']):,} to the VMM"
    return out


def parity(kernel, checks):
    got = checks.get(f"{kernel}-boot-parity")
    return got[-1] if got else "-"


def rows(cells, checks):
    out = []
    for k in KERNELS:
        if not any(key[0] == k for key in cells):
            continue
        boot_hw = cells.get((k, "boot", "hwlab"), {})
        boot_q = cells.get((k, "boot", "qemu-sid"), {})
        version = boot_hw.get("version") or boot_q.get("version") or "?"
        row = {"kernel": k, "version": version,
               "boot hwlab-vmm": boot(cells, k, "hwlab"),
               "boot QEMU " + boot_q.get("qemu", "sid"): boot(cells, k, "qemu-sid"),
               "boot parity": parity(k, checks)}
        for cell, title, tkey in CASES:
            state = case_state(k, cell, checks)
            kv = cells.get((k, cell, "hwlab"), {})
            if state is None:
                row[title] = "-"
            elif state == "FAIL":
                row[title] = "FAIL"
            elif kv.get("outcome") == "died":
                # private hugetlb on 6.12 and later: the documented limit (docs/design.md)
                row[title] = f"guest dies (limit: THP split reads the lost 2 MiB; {kv.get('recovered', '?')} told)"
            elif cell == "smca":
                # how the guest heard of it, how its targets died, median times
                t = kv.get(tkey)
                codes = kv.get("target_codes", "")
                by_ao = codes.count("BUS_MCEERR_AO")
                row[title] = (f"told by {kv.get('told', '?')}; {by_ao} of {kv.get('events', '?')} "
                              f"isolated before the target's read"
                              + (f", memory_failure() {t} ms (median)" if t and t != "none" else ""))
            elif cell == "salvage":
                t = kv.get(tkey)
                row[title] = (f"recovered, {kv.get('recovered', '?')} of 512 pages lost"
                              + (f", salvage {t} ms" if t and t != "none" else ""))
            else:
                t = kv.get(tkey) if tkey else None
                row[title] = "recovered" + (f", {t} ms" if t and t != "none" else "")
                if cell == "early-default-poll" and kv.get("check_interval_s"):
                    row[title] += f" (check_interval {kv['check_interval_s']} s)"
        row["rasdaemon"] = ras_state(k, checks)
        out.append(row)
    return out


def main(argv):
    markdown = "--markdown" in argv
    args = [a for a in argv if a != "--markdown"]
    if len(args) != 1:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    cells, checks = parse(args[0])
    table = rows(cells, checks)
    if not table:
        print(f"guest_matrix: no HWLAB-MEASURE guest-matrix lines in {args[0]}", file=sys.stderr)
        return 1
    cols = list(dict.fromkeys(c for r in table for c in r))
    if markdown:
        print("| " + " | ".join(c for c in cols) + " |")
        print("|" + "---|" * len(cols))
        for r in table:
            print("| " + " | ".join(r.get(c, "-") for c in cols) + " |")
        return 0
    print("== guest matrix: hwlab-vmm (and sid's QEMU for the boot time), one outer-VM boot")
    for r in table:
        print(f"-- {r['kernel']}: {r['version']}")
        for c in cols[2:]:
            print(f"   {c:34} {r.get(c, '-')}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
