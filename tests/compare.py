#!/usr/bin/env python3
"""The side-by-side table of the compare scenario (make compare).

Usage: tests/compare.py [--markdown] build/logs/compare.log

Reads the scenario's "HWLAB-MEASURE compare vmm=... case=..." lines (one
per event, all from one outer-VM boot) and prints a block per case with a
column per VMM: what the inner kernel read from the bank (MCG_STATUS,
bank, MCi_STATUS, ADDR, MISC: its /dev/mcelog record, or its console when
it died in the handler), what it did, whether the inner process got its
SIGBUS and the guest lived (events that did / all), and the median and p99
of the times from the corrupt-pfn write. A value that differs between the
two is marked, with the reason where it is known (WHY). --markdown prints
the same cells as one Markdown table per case, without the reasons (the
table in docs/design.md). Exit 1 if the log has no compare lines or a case
lacks a VMM.
"""
import re
import sys

LINE = re.compile(r"^HWLAB-MEASURE compare (.*)$")
VMMS = ("qemu", "hwlab-vmm")
FIELDS = [
    ("mcg_status", "MCG_STATUS read back"),
    ("bank", "bank"),
    ("mci_status", "MCi_STATUS read back"),
    ("mci_addr", "MCi_ADDR"),
    ("mci_misc", "MCi_MISC"),
    ("inner", "inner kernel"),
    ("sigbus", "inner process SIGBUS"),
    ("survived", "guest survived"),
    ("vmm_report", "the VMM's own report"),
    ("inject_ms", "write -> VMM injection (ms)"),
    ("mce_line_ms", "write -> first inner mce line (ms)"),
    ("recovered_ms", "write -> inner Recovered (ms)"),
]
# Rows of one case only, printed where its lines carry them: the 2 MiB
# hugetlb case (poisoned= huge_base= lsb= pages_recovered= spread_ms=)
CASE_FIELDS = [
    ("told_page", "4 KiB page told first (of the 2 MiB)"),
    ("lsb", "si_addr_lsb the VMM acted on"),
    ("pages_recovered", "pages of the lost 2 MiB the guest isolated"),
    ("spread_ms", "telling the rest of the 2 MiB (ms)"),
]
# Why a value differs, where QEMU 7.2's is the wrong one for this guest:
# the vCPU is AMD (kvm_amd), and QEMU 7.2 injects Intel's encoding into it
# (its AMD encodings came with QEMU 9.1, "i386: Fix MCE support for AMD
# hosts"); the guest's mce_severity_amd() then sees UC without SUCCOR in
# CPUID (KVM does not report it, QEMU 7.2 does not add it) and panics.
WHY = {
    "mci_status": "QEMU 7.2 injects Intel's S|AR codes into an AMD vCPU; hwlab-vmm, like QEMU 9.1, "
                  "AMD's (AR: VAL|UC|EN|MISCV|ADDRV|POISON; AO: a deferred error, no UC)",
    "mcg_status": "QEMU raises an #MC for an AO too (MCIP|RIPV); an AMD deferred error has no "
                  "#MC, the guest's poll reads the bank (MCG_STATUS 0). In QEMU's late kill the "
                  "AO of its own early kill (see the VMM's report) can reach the guest first",
    "bank": "hwlab-vmm keeps deferred errors out of bank 9, the AR bank",
    "inner": "without SUCCOR in CPUID, mce_severity_amd() makes every UC error fatal",
    "sigbus": "the guest died first",
    "survived": "see inner kernel",
    "vmm_report": "QEMU sets early kill for itself (PR_MCE_KILL_EARLY), so the outer kernel also "
                  "sends it an AO for a page its vCPU then consumes; hwlab-vmm follows the sysctl "
                  "unless --mce-kill says otherwise",
}


# the same field, another reason, in one case
WHY_CASE = {
    ("outside", "vmm_report"): "a page of the VMM's own heap, not guest RAM: neither can tell the guest; "
                               "what each VMM does with its own poisoned memory is in its report",
    ("outside", "survived"): "see the VMM's own report",
    ("hugetlb", "lsb"): "the outer kernel's SIGBUS names the whole 2 MiB (lsb 21, kernel patch 0001); QEMU "
                        "7.2 ignores si_addr_lsb and injects the one 4 KiB page at si_addr (QEMU prints no "
                        "lsb: '-'); hwlab-vmm records all 512 pages as poisoned",
    ("hugetlb", "pages_recovered"): "a Linux guest ignores an MCi_MISC LSB above 12, so the VMM must tell it "
                                    "each 4 KiB page: hwlab-vmm tells the other 511 after the first; QEMU "
                                    "tells one (and its guest died of that one)",
    ("hugetlb", "told_page"): "QEMU's own early-kill AO names the huge page's head (page 0); the AR names "
                              "the page the vCPU touched",
}


def told_page(event):
    """Which 4 KiB page of the lost 2 MiB the VMM named first, and which was poisoned."""
    try:
        base = int(event["huge_base"], 16)
        return f"{(int(event['gpa'], 16) - base) // 4096} (poisoned: {(int(event['poisoned'], 16) - base) // 4096})"
    except (KeyError, ValueError):
        return "-"


def parse(path):
    cases = {}
    for line in open(path, errors="replace"):
        m = LINE.match(line.rstrip("\n"))
        if not m:
            continue
        kv = dict(f.split("=", 1) for f in m.group(1).split() if "=" in f)
        if "huge_base" in kv:
            kv["told_page"] = told_page(kv)
        cases.setdefault(kv.get("case", "?"), {}).setdefault(kv.get("vmm", "?"), []).append(kv)
    return cases


def quantile(values, q):
    """The smallest value with at least q of them at or below it."""
    v = sorted(values)
    return v[max(0, -(-len(v) * q // 100) - 1)]


def summary(events, key):
    """One cell: a value (or "varies"), "yes n/N", or "median / p99 (n)"."""
    vals = [e.get(key, "-") for e in events]
    if key.endswith("_ms"):
        nums = [int(v) for v in vals if v.lstrip("-").isdigit()]
        if not nums:
            return "-"
        return f"{quantile(nums, 50)} / {quantile(nums, 99)} (n={len(nums)})"
    if key in ("survived", "inner", "sigbus") and len(set(vals)) > 1:
        return " ".join(f"{v} {vals.count(v)}/{len(vals)}" for v in sorted(set(vals)))
    if key in ("survived",):
        return f"{vals[0]} {len(vals)}/{len(vals)}"
    if key == "mci_addr":
        if all(e.get("mci_addr", "-") == "-" for e in events):
            return "-"
        return "= GPA" if all(e.get("mci_addr") == e.get("gpa") for e in events) else "varies"
    if len(set(vals)) == 1:
        return vals[0]
    # e.g. QEMU's late kill: its guest saw the AO first in some events
    return " | ".join(f"{v} ({vals.count(v)})" for v in sorted(set(vals), key=vals.count, reverse=True))


def injection_ratio(by_vmm):
    """QEMU's median write -> injection over hwlab-vmm's, as "N.Nx"; None without both."""
    qi = [int(e["inject_ms"]) for e in by_vmm["qemu"] if e.get("inject_ms", "-").isdigit()]
    hi = [int(e["inject_ms"]) for e in by_vmm["hwlab-vmm"] if e.get("inject_ms", "-").isdigit()]
    if qi and hi and quantile(hi, 50):
        return f"{quantile(qi, 50) / quantile(hi, 50):.1f}x"
    return None


def main():
    args = sys.argv[1:]
    markdown = bool(args) and args[0] == "--markdown"
    if markdown:
        args = args[1:]
    if len(args) != 1:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    cases = parse(args[0])
    if not cases:
        print(f"compare.py: no HWLAB-MEASURE compare lines in {args[0]}", file=sys.stderr)
        return 1
    ok = True
    width = max(len(label) for _, label in FIELDS + CASE_FIELDS)
    for case, by_vmm in cases.items():
        missing = [v for v in VMMS if v not in by_vmm]
        if missing:
            print(f"compare.py: case {case} has no line for {', '.join(missing)}", file=sys.stderr)
            ok = False
            continue
        per_boot = "a boot each" if case == "hugetlb" else "one boot"
        title = (f"{case}: {len(by_vmm['qemu'])} event(s) in QEMU (a boot each), "
                 f"{len(by_vmm['hwlab-vmm'])} in hwlab-vmm ({per_boot})")
        everyone = by_vmm["qemu"] + by_vmm["hwlab-vmm"]
        extra = [(k, label) for k, label in CASE_FIELDS if any(k in e for e in everyone)]
        rows = [("read_from", "values read from")] + FIELDS + extra
        if markdown:
            print(f"\n**{title}**\n\n| | QEMU 7.2 | hwlab-vmm |\n| --- | --- | --- |")
            for key, label in rows:
                # a cell of several values joins them with "; ", not a table's "|"
                a, b = (summary(by_vmm[v], key).replace(" | ", "; ") for v in VMMS)
                print(f"| {label} | {a} | {b} |".replace("->", "→"))
            ratio = injection_ratio(by_vmm)
            if ratio:
                print(f"| median injection, QEMU / hwlab-vmm | {ratio} | |")
            continue
        print(f"\n{title}")
        print(f"  {'':<{width}}  {'QEMU':<34}  {'hwlab-vmm':<34}")
        for key, label in rows:
            a, b = summary(by_vmm["qemu"], key), summary(by_vmm["hwlab-vmm"], key)
            note = ""
            if a != b and not key.endswith("_ms") and key not in ("read_from", "mci_addr"):
                note = "  differs: " + WHY_CASE.get((case, key), WHY.get(key, "see the scenario log"))
            print(f"  {label:<{width}}  {a:<34}  {b:<34}{note}")
        ratio = injection_ratio(by_vmm)
        if ratio:
            print(f"  {'median injection, QEMU / hwlab-vmm':<{width}}  {ratio}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
