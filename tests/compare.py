#!/usr/bin/env python3
"""The side-by-side table of the compare scenario (make compare).

Usage: tests/compare.py [--markdown] build/logs/compare.log

Reads the scenario's lines, all from one outer-VM boot:
  "HWLAB-MEASURE compare-vmm vmm=... suite=... qemu=... libvirt=..." (or
      unavailable=REASON): the VMMs, in column order after hwlab-vmm, and
      their package versions;
  "HWLAB-MEASURE compare-guest guest=... kernel=... version=...": the guests;
  "HWLAB-MEASURE compare guest=... vmm=... case=... ..." one per event (or
      noboot=PANIC LINE when that VMM did not boot that guest).
The dying and default cases (issue #24) get tables of their own, after the
blocks: "dying target" (guest, VMM, backing: deaths / events, pages of the
lost 2 MiB the VMM told, pages the guest isolated, median ms from the write
to the target's death) and "default check_interval" (guest, VMM: how the
guest was told, how the target heard (BUS_MCEERR_AO: isolated before it
touched the page; AR: at its 30 s reread), median ms to the guest's
Recovered).
It prints the versions, then a block per guest kernel and case with a column
per VMM (hwlab-vmm, QEMU 11.1, 10.0, 7.2): what the inner kernel read from
the bank (its mcelog record, or its console's mce lines), what it did,
whether the inner process got its SIGBUS and the guest lived (events that
did / all), and the median and p99 of the times from the corrupt-pfn write:
the VMM's injection as it reported it, and the guest's first mce line and
its Recovered line at the guest's own printk time mapped to the outer clock
(the serial arrival beside it). A value that differs from hwlab-vmm's is
listed under the block with the reason where it is known (WHY). --markdown
prints the same cells as one Markdown table per block, without the reasons
(the tables in docs/design.md). Exit 1 if the log has no compare lines or a
block lacks a VMM that the boot had.
"""
import re
import sys

LINE = re.compile(r"^HWLAB-MEASURE (compare|compare-vmm|compare-guest) (.*)$")
FIELDS = [
    ("read_from", "values read from"),
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
    ("mce_ms", "write -> first inner mce line, guest clock (ms)"),
    ("recovered_ms", "write -> inner Recovered, guest clock (ms)"),
    ("recovered_serial_ms", "write -> Recovered line's serial arrival (ms)"),
]
# Rows of one case only, printed where its lines carry them: the 2 MiB
# hugetlb case (poisoned= huge_base= lsb= pages_recovered= spread_ms=) and
# the VMM's own heap page (heap_va=)
CASE_FIELDS = [
    ("told_page", "4 KiB page told first (of the 2 MiB)"),
    ("lsb", "si_addr_lsb the VMM acted on"),
    ("pages_recovered", "pages of the lost 2 MiB the guest isolated"),
    ("spread_ms", "telling the rest of the 2 MiB (ms)"),
]
# Why a value differs from hwlab-vmm's, where it is known. QEMU 7.2 injects
# Intel's encoding into the AMD vCPU (kvm_amd) (AMD encodings came with
# QEMU 9.1, "i386: Fix MCE support for AMD hosts"); the guest's
# mce_severity_amd() then sees UC without SUCCOR in CPUID (KVM does not
# report it, QEMU 7.2 does not add it) and panics. QEMU 10.0 and 11.1 inject
# the AMD values hwlab-vmm does.
WHY = {
    "mci_status": "QEMU 7.2 injects Intel's S|AR codes into an AMD vCPU; hwlab-vmm, like QEMU 9.1 and "
                  "later, AMD's (AR: VAL|UC|EN|MISCV|ADDRV|POISON; AO: a deferred error, no UC). QEMU "
                  "10.0/11.1's late kill puts the AO of its own early kill and then the AR into bank 9: "
                  "the guest reads the AR with OVER (0xfc...) when its poll had not cleared the AO yet",
    "mcg_status": "QEMU raises an #MC for an AO too (MCIP|RIPV); an AMD deferred error has no "
                  "#MC, the guest's poll reads the bank (MCG_STATUS 0). In QEMU's late kill the "
                  "AO of its own early kill (see the VMM's report) can reach the guest first",
    "bank": "hwlab-vmm keeps deferred errors out of bank 9, the AR bank; QEMU puts every error in bank 9",
    "inner": "QEMU 7.2: without SUCCOR in CPUID, mce_severity_amd() makes every UC error fatal",
    "sigbus": "the guest died first, or its poll had not found the AO yet",
    "survived": "see inner kernel",
    "vmm_report": "QEMU sets early kill for itself (PR_MCE_KILL_EARLY), so the outer kernel also "
                  "sends it an AO for a page its vCPU then consumes; hwlab-vmm follows the sysctl "
                  "unless --mce-kill says otherwise",
    "read_from": "a guest that died in its #MC handler never reached its mcelog; Debian's kernels "
                 "have no /dev/mcelog",
}
# the same field, another reason, in one case
WHY_CASE = {
    ("outside", "vmm_report"): "a page of the VMM's own heap, not guest RAM: no VMM can tell the guest; "
                               "what each VMM does with its own poisoned memory is in its report",
    ("outside", "survived"): "see the VMM's own report",
    ("hugetlb", "lsb"): "the outer kernel's SIGBUS names the whole 2 MiB (lsb 21, kernel patch 0001); QEMU "
                        "prints no lsb ('-') and injects the 4 KiB page at si_addr; hwlab-vmm records all "
                        "512 pages as poisoned",
    ("hugetlb", "pages_recovered"): "a Linux guest ignores an MCi_MISC LSB above 12, so the VMM must tell it "
                                    "each 4 KiB page: hwlab-vmm tells the other 511 after the first; QEMU "
                                    "tells the head (its AO) and then each page the guest touches (its ARs)",
    ("hugetlb", "told_page"): "QEMU's own early-kill AO names the huge page's head (page 0); the AR names "
                              "the page the vCPU touched",
}


# cases with a table of their own (dying_rows, default_rows)
OWN_TABLES = ("dying", "default")


def counted(vals):
    """Distinct values with their counts, the most common first: "a (3), b (1)"."""
    return ", ".join(f"{v} ({vals.count(v)})" for v in sorted(set(vals), key=vals.count, reverse=True))


def median_of(events, key):
    nums = [int(e[key]) for e in events if e.get(key, "-").lstrip("-").isdigit()]
    return f"{quantile(nums, 50)} (n={len(nums)})" if nums else "-"


def spread_of(events, key):
    """A count per event as "median (min-max)", or the one value they all have."""
    nums = sorted(int(e[key]) for e in events if e.get(key, "-").isdigit())
    if not nums:
        return "-"
    if nums[0] == nums[-1]:
        return str(nums[0])
    return f"{quantile(nums, 50)} ({nums[0]}-{nums[-1]})"


def dying_rows(rows):
    """The dying-target table: one row per guest, VMM and backing."""
    out = [("guest", "VMM", "backing", "deaths / events", "pages told", "pages isolated",
            "ms to target death (median)", "deaths")]
    for (guest, vmm, backing), events in rows.items():
        if "noboot" in events[0]:
            out.append((guest, vmm, backing, "no boot", "-", "-", "-", events[0]["noboot"]))
            continue
        died = [e for e in events if e.get("outcome") != "lived"]
        out.append((guest, vmm, backing, f"{len(died)} / {len(events)}",
                    spread_of(events, "pages_told"), spread_of(events, "pages_isolated"),
                    median_of(events, "target_death_ms"),
                    counted([e.get("death", "-").replace("_", " ") if e.get("outcome") == "died" else e.get("outcome", "-")
                             for e in died]) or "-"))
    return out


def default_rows(rows):
    """The default check_interval table: one row per guest and VMM."""
    out = [("guest", "VMM", "told", "target got", "ms to Recovered (median)", "events")]
    for (guest, vmm, _), events in rows.items():
        if "noboot" in events[0]:
            out.append((guest, vmm, "no boot", "-", "-", events[0]["noboot"]))
            continue
        told = counted([e.get("told", "-") for e in events]) if vmm == "hwlab-vmm" else "poll (no SMCA)"
        out.append((guest, vmm, told, counted([e.get("sigbus", "-") for e in events]),
                    median_of(events, "recovered_ms"), str(len(events))))
    return out


def print_rows(title, rows, markdown):
    """A table: Markdown, or columns padded to their widest cell."""
    if markdown:
        print(f"\n**{title}**\n\n| {' | '.join(rows[0])} |\n|{' --- |' * len(rows[0])}")
        for r in rows[1:]:
            print(f"| {' | '.join(r)} |")
        return
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    print(f"\n{title}")
    for r in rows:
        print("  " + "  ".join(f"{c:<{w}}" for c, w in zip(r, widths)).rstrip())


def told_page(event):
    """Which 4 KiB page of the lost 2 MiB the VMM named first, and which was poisoned."""
    try:
        base = int(event["huge_base"], 16)
        return f"{(int(event['gpa'], 16) - base) // 4096} (poisoned: {(int(event['poisoned'], 16) - base) // 4096})"
    except (KeyError, ValueError):
        return "-"


def fields_of(rest):
    """key=value fields; noboot= and unavailable= take the rest of the line."""
    kv = {}
    for key in ("noboot", "unavailable"):
        m = re.search(r"(?:^| )" + key + r"=(.*)$", rest)
        if m:
            kv[key] = m.group(1).strip()
            rest = rest[:m.start()]
    kv.update(f.split("=", 1) for f in rest.split() if "=" in f)
    return kv


def parse(path):
    vmms, guests, blocks, own = {}, [], {}, {}
    for line in open(path, errors="replace"):
        m = LINE.match(line.rstrip("\n"))
        if not m:
            continue
        kind, kv = m.group(1), fields_of(m.group(2))
        if kind == "compare-vmm":
            vmms.setdefault(kv.get("vmm", "?"), kv)
        elif kind == "compare-guest":
            if kv.get("guest") not in [g["guest"] for g in guests]:
                guests.append(kv)
        elif kv.get("case") in OWN_TABLES:
            key = (kv.get("guest", "?"), kv.get("vmm", "?"), kv.get("backing", "-"))
            own.setdefault(kv["case"], {}).setdefault(key, []).append(kv)
        else:
            if "huge_base" in kv:
                kv["told_page"] = told_page(kv)
            key = (kv.get("guest", "?"), kv.get("case", "?"))
            blocks.setdefault(key, {}).setdefault(kv.get("vmm", "?"), []).append(kv)
    return vmms, guests, blocks, own


def quantile(values, q):
    """The smallest value with at least q of them at or below it."""
    v = sorted(values)
    return v[max(0, -(-len(v) * q // 100) - 1)]


def summary(events, key):
    """One cell: a value (or the values with their counts), "yes n/N", or "median / p99 (n)"."""
    if events and "noboot" in events[0]:
        if key != "read_from":
            return "-"
        return "unavailable" if "unavailable" in events[0] else "no boot"
    vals = [e.get(key, "-") for e in events]
    if key.endswith("_ms"):
        nums = [int(v) for v in vals if v.lstrip("-").isdigit()]
        if not nums:
            return "-"
        return f"{quantile(nums, 50)} / {quantile(nums, 99)} (n={len(nums)})"
    if key in ("survived", "inner", "sigbus") and len(set(vals)) > 1:
        return " ".join(f"{v} {vals.count(v)}/{len(vals)}" for v in sorted(set(vals)))
    if key == "survived":
        return f"{vals[0]} {len(vals)}/{len(vals)}"
    if key == "mci_addr":
        if all(e.get("mci_addr", "-") == "-" for e in events):
            return "-"
        return "= GPA" if all(e.get("mci_addr") == e.get("gpa") for e in events) else "varies"
    if len(set(vals)) == 1:
        return vals[0]
    # e.g. QEMU's late kill: its guest saw the AO first in some events
    return " | ".join(f"{v} ({vals.count(v)})" for v in sorted(set(vals), key=vals.count, reverse=True))


def median_ms(events, key):
    nums = [int(e[key]) for e in events if e.get(key, "-").lstrip("-").isdigit()]
    return quantile(nums, 50) if nums else None


def title_of(vmm, info):
    if vmm == "hwlab-vmm":
        return "hwlab-vmm"
    return "QEMU " + vmm[len("qemu-"):] if vmm.startswith("qemu-") else vmm


def versions_text(vmms, guests):
    out = []
    for vmm, info in vmms.items():
        if vmm == "hwlab-vmm":
            out.append("hwlab-vmm: this tree")
        elif "unavailable" in info:
            out.append(f"{title_of(vmm, info)} (Debian {info.get('suite')}): unavailable: {info['unavailable']}")
        else:
            out.append(f"{title_of(vmm, info)}: qemu-system-x86 {info.get('qemu', '?')}, libvirt0 "
                       f"{info.get('libvirt', '?')} (Debian {info.get('suite')}, libvirt's embedded driver"
                       f"{'' if info.get('driver', 'embed') == 'embed' else ', ' + info['driver']})")
    for g in guests:
        out.append(f"guest {g['guest']}: {g.get('kernel')} ({'our tinyconfig bzImage' if g.get('version') == 'ours' else g.get('version')})")
    return out


def main():
    args = sys.argv[1:]
    markdown = bool(args) and args[0] == "--markdown"
    if markdown:
        args = args[1:]
    if len(args) != 1 or args[0].startswith("-"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        vmms, guests, blocks, own = parse(args[0])
    except OSError as e:
        print(f"compare.py: cannot read {args[0]}: {e.strerror}", file=sys.stderr)
        return 2
    if not blocks and not own:
        print(f"compare.py: no HWLAB-MEASURE compare lines in {args[0]}", file=sys.stderr)
        return 1
    # columns: hwlab-vmm first, then the QEMUs in the scenario's order
    # (11.1, 10.0, 7.2); one the log names only in its events comes last
    order = ["hwlab-vmm"] + [v for v in vmms if v != "hwlab-vmm"]
    for by_vmm in blocks.values():
        order += [v for v in by_vmm if v not in order]
    present = [v for v in order if "unavailable" not in vmms.get(v, {})]
    # a peer the image lacks keeps its column, each cell saying so
    for v in order:
        if "unavailable" in vmms.get(v, {}):
            for by_vmm in blocks.values():
                by_vmm.setdefault(v, [{"noboot": "unavailable: " + vmms[v]["unavailable"], "unavailable": "1"}])
    ok = True
    if markdown:
        print("\n".join(f"- {t}" for t in versions_text(vmms, guests)))
    else:
        print("Versions:")
        print("\n".join(f"  {t}" for t in versions_text(vmms, guests)))
    width = max(len(label) for _, label in FIELDS + CASE_FIELDS)
    colw = 30
    for (guest, case), by_vmm in blocks.items():
        missing = [v for v in present if v not in by_vmm]
        if missing:
            print(f"compare.py: guest {guest}, case {case} has no line for {', '.join(missing)}", file=sys.stderr)
            ok = False
        cols = [v for v in order if v in by_vmm]
        counts = ", ".join(
            f"{title_of(v, vmms.get(v, {}))} {summary(by_vmm[v], 'read_from') if 'noboot' in by_vmm[v][0] else len(by_vmm[v])}"
            for v in cols)
        title = f"guest {guest}, {case}: events per VMM: {counts}"
        everyone = [e for v in cols for e in by_vmm[v]]
        extra = [(k, label) for k, label in CASE_FIELDS if any(k in e for e in everyone)]
        rows = [(k, label) for k, label in FIELDS if any(k in e for e in everyone) or k == "read_from"] + extra
        cells = {v: {k: summary(by_vmm[v], k) for k, _ in rows} for v in cols}
        noboots = [(v, by_vmm[v][0]["noboot"]) for v in cols
                   if "noboot" in by_vmm[v][0] and "unavailable" not in by_vmm[v][0]]
        hw = by_vmm.get("hwlab-vmm")
        ratios = []
        if hw and "noboot" not in hw[0] and median_ms(hw, "inject_ms"):
            for v in cols:
                if v != "hwlab-vmm" and "noboot" not in by_vmm[v][0] and median_ms(by_vmm[v], "inject_ms") is not None:
                    ratios.append((v, f"{median_ms(by_vmm[v], 'inject_ms') / median_ms(hw, 'inject_ms'):.1f}x"))
        if markdown:
            heads = " | ".join(title_of(v, vmms.get(v, {})) for v in cols)
            print(f"\n**{title}**\n\n| | {heads} |\n| --- |{' --- |' * len(cols)}")
            for v, why in noboots:
                cells[v]["read_from"] = f"no boot: {why}"
            for key, label in rows:
                vals = " | ".join(cells[v][key].replace(" | ", "; ") for v in cols)
                print(f"| {label} | {vals} |".replace("->", "→"))
            if ratios:
                r = dict(ratios)
                print(f"| median injection / hwlab-vmm's | {' | '.join(r.get(v, '') for v in cols)} |")
            continue
        print(f"\n{title}")
        print(f"  {'':<{width}}  " + "  ".join(f"{title_of(v, vmms.get(v, {})):<{colw}}" for v in cols))
        notes = []
        for key, label in rows:
            print(f"  {label:<{width}}  " + "  ".join(f"{cells[v][key]:<{colw}}" for v in cols))
            if hw and "noboot" not in hw[0] and not key.endswith("_ms") and key != "mci_addr":
                differ = [title_of(v, vmms.get(v, {})) for v in cols
                          if v != "hwlab-vmm" and "noboot" not in by_vmm[v][0] and cells[v][key] != cells["hwlab-vmm"][key]]
                if differ:
                    notes.append(f"{label}: {', '.join(differ)} differ(s) from hwlab-vmm: "
                                 + WHY_CASE.get((case, key), WHY.get(key, "see the scenario log")))
        if ratios:
            print(f"  {'median injection / hwlab-vmm':<{width}}  "
                  + "  ".join(f"{dict(ratios).get(v, ''):<{colw}}" for v in cols))
        for v, why in noboots:
            print(f"  no boot in {title_of(v, vmms.get(v, {}))}: {why}")
        for n in notes:
            print(f"  * {n}")
    if "dying" in own:
        print_rows("Dying target: a lost 2 MiB of hugetlb guest RAM, its target dies of its SIGBUS "
                   "(early kill), a new one starts", dying_rows(own["dying"]), markdown)
    if "default" in own:
        print_rows("Default check_interval: early-kill AO, the target rereads every 30 s "
                   "(hwlab-vmm --smca on)", default_rows(own["default"]), markdown)
    for vmm, info in vmms.items():
        if "unavailable" in info:
            print(f"\n{title_of(vmm, info)} skipped: {info['unavailable']}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
