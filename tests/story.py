#!/usr/bin/env python3
"""Turn outer-VM scenario logs into a readable recovery story.

Usage: tests/story.py LOG...   (console logs written by outer-qemu/boot.sh)
Prints, per scenario, the chain from the kernel's memory-failure messages
through the VMM's events to the guest's own reports, then a summary table.
A scenario that booted a Linux guest in hwlab-vmm (linux_guest) is told two
levels deep, run by run and in time order: the outer kernel, the VMM, the
inner kernel and the inner processes, each line at its time on the outer
VM's clock, which the VMM's report lines and its --console-stamp share.
"""
import json
import re
import sys

KERNEL = re.compile(r"^\[\s*[\d.]+\] (Memory failure: .*|Injecting memory failure.*)$")
KERNEL_TIMED = re.compile(r"^\[\s*([\d.]+)\] (Memory failure: .*|Injecting memory failure.*)$")
VMM = re.compile(r"^  vmm: (\{.*\})$")
# an inner console line as show_console echoes it: the VMM's stamp, the text
INNER = re.compile(r"^  con: \[t_ns=(\d+)\] (.*)$")
INNER_KERNEL = re.compile(r"^\[\s*[\d.]+\] (.*)$")
INNER_SHOWN = re.compile(r"^(mce: |Memory failure: |Kernel panic|Oops|BUG: |INNER-SIGBUS |"
                         r"INNER-EXIT |INNER-RESTART |INNER-CORRUPT )")
# so many lines of one kind in a run are enough to tell it (a lost huge page
# is 512 "Memory failure" lines)
SHOWN_PER_KIND = 12


def json_of(pattern, line):
    """The JSON object a line of this kind carries, or None."""
    m = pattern.match(line)
    if not m:
        return None
    try:
        return json.loads(m.group(1))
    except json.JSONDecodeError:
        return None


def describe(ev):
    kind = ev.get("event")
    if kind == "vmm_start":
        return (f"VMM pid {ev['pid']} starts a {ev['mem'] >> 20} MiB guest "
                f"({ev['backing']}, {ev['vcpus']} vCPU), MCG_CAP {ev['mcg_cap']}, "
                f"early kill: {ev['mce_kill']}")
    if kind == "guest_log":
        return f"guest vCPU {ev['vcpu']}: {ev['msg']}"
    if kind == "poison_hook":
        return (f"VMM test hook poisons GPA {ev.get('gpa', '?')} "
                f"(hva {ev.get('hva')}) with {ev.get('method')}")
    if kind == "sigbus":
        gpa = ev.get("gpa") or "outside guest RAM"
        text = (f"SIGBUS {ev['si_code']} at hva {ev.get('hva')} -> GPA {gpa}, "
                f"lsb {ev.get('lsb')}: {ev['action']}")
        if ev["action"] == "inject":
            text += (f" vMCE into vCPU {ev['vcpu']} (MCi_STATUS {ev['mci_status']}, "
                     f"MCG_STATUS {ev['mcg_status']}, MISC {ev['mci_misc']}) "
                     f"{ev['latency_ns'] / 1e6:.2f} ms after the signal")
        if ev.get("reason"):
            text += f" ({ev['reason']})"
        return text
    if kind == "guest_retired":
        return (f"guest vCPU {ev['vcpu']} #MC handler: bank {ev['bank']} says GPA "
                f"{ev['gpa']}, retired {ev['pages']} page(s); matches the injection: "
                f"{'yes' if ev['matches_injection'] else 'NO'}")
    if kind in ("guest_pass", "io_ignored"):
        return None
    if kind == "guest_done":
        return (f"guest vCPU {ev['vcpu']} done: {ev['passes']} passes, "
                f"{ev['pages_retired']} page(s) retired, checksums "
                f"{'intact' if ev['checksum_ok'] else 'BROKEN'}")
    if kind == "vmm_exit":
        return (f"VMM exits: {ev['status']}, {ev['injected']} machine check(s) injected, "
                f"{ev['poisoned_pages']} poisoned page(s) on its list")
    return f"{kind}: {json.dumps(ev)}"


def story(path, quiet=False):
    name = path.rsplit("/", 1)[-1].removesuffix(".log")
    row = {"scenario": name, "signal": "-", "gpa": "-", "injected": 0,
           "retired": 0, "checksums": "-", "checks": "0/0"}
    passed = failed = 0
    kernel = []
    out = (lambda *a: None) if quiet else print
    out(f"\n=== {name}")
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        m = KERNEL.match(line)
        if m:
            # The VMM's report reaches the console only when it exits; tell
            # the kernel's side where it happened, right after the poisoning.
            kernel.append(f"  kernel | {m.group(1)}")
            continue
        ev = json_of(VMM, line)
        if ev:
            text = describe(ev)
            if text:
                who = "guest " if ev["event"].startswith("guest") else "vmm   "
                out(f"  {who} | {text}")
            if ev["event"] in ("poison_hook", "sigbus") and kernel:
                out("\n".join(kernel))
                kernel.clear()
            if ev["event"] == "sigbus" and ev["action"] == "inject":
                row["signal"], row["gpa"] = ev["si_code"], ev["gpa"]
                row["injected"] += 1
            elif ev["event"] == "guest_retired":
                row["retired"] += ev["pages"]
            elif ev["event"] == "guest_done":
                row["checksums"] = "intact" if ev["checksum_ok"] else "BROKEN"
            continue
        if line.startswith("HWLAB-CHECK PASS"):
            passed += 1
        elif line.startswith("HWLAB-CHECK FAIL"):
            failed += 1
            out(f"  check  | {line[len('HWLAB-CHECK '):]}")
    if kernel:
        out("\n".join(kernel))
    row["checks"] = f"{passed}/{passed + failed}"
    return row


def linux_event(ev):
    """A VMM report line of a Linux-guest run, or None for one not told."""
    kind = ev.get("event")
    if kind == "sigbus":
        text = (f"SIGBUS {ev['si_code']} lsb {ev.get('lsb')} -> GPA {ev.get('gpa') or '-'}: "
                f"{ev['action']}")
        if ev["action"] == "inject":
            text += (f" into vCPU {ev['vcpu']}, bank {ev['bank']} MCi_STATUS {ev['mci_status']} "
                     f"MCG_STATUS {ev['mcg_status']} ADDR {ev['mci_addr']} MISC {ev['mci_misc']}")
        if ev.get("reason"):
            text += f" ({ev['reason']})"
        return text
    if kind == "poison_spread":
        if ev["status"] == "done":
            return (f"lost 2 MiB at {ev['gpa']}: all {ev['pages']} pages told "
                    f"({ev['told']} deferred errors, {ev['duration_ns'] / 1e6:.0f} ms)")
        return f"lost extent at {ev['gpa']}, {ev['pages']} pages: {ev['status']}"
    if kind in ("reset", "guest_reboot", "guest_fail", "mce_broadcast", "remap"):
        return f"{kind}: " + ", ".join(f"{k} {v}" for k, v in ev.items()
                                       if k not in ("event", "t_ns"))
    if kind == "vmm_exit":
        return (f"exits {ev['status']}: {ev['injected']} machine check(s) injected, "
                f"{ev['poisoned_pages']} poisoned page(s), {ev['resets']} reset(s)")
    return None


TOOL = re.compile(r"^  \| (\{.*\})$")


def place_outer(groups, poisons):
    """Put the outer kernel's lines on the VMM's clock.

    printk's clock is not CLOCK_MONOTONIC, so each group of lines that one
    "Injecting memory failure at pfn X" starts is anchored at the time
    hwpoison-guest wrote that pfn (its own poison line), keeping printk's
    spacing inside the group; a group without a write of its own (the same
    page poisoned again) takes the offset of the nearest anchored one.
    """
    unused = list(poisons)
    for g in groups:
        for i, (pfn, t_ns) in enumerate(unused):
            if pfn == g["pfn"]:
                g["offset"] = t_ns - g["lines"][0][0]
                del unused[i]
                break
    known = [g["offset"] for g in groups if "offset" in g]
    lines, last = [], known[0] if known else 0
    for g in groups:
        last = g.get("offset", last)
        lines += [(t + last, "outer", text) for t, text in g["lines"]]
    return lines


def linux_runs(path):
    """The Linux-guest runs of one log: their outer, VMM and inner lines."""
    runs, groups, poisons = [], [], []
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        m = KERNEL_TIMED.match(line)
        if m:
            t, text = int(float(m.group(1)) * 1e9), m.group(2)
            pfn = re.match(r"Injecting memory failure at pfn (0x[0-9a-f]+)", text)
            if pfn or not groups:
                groups.append({"pfn": pfn.group(1) if pfn else None, "lines": []})
            groups[-1]["lines"].append((t, text))
            continue
        ev = json_of(TOOL, line)
        if ev:
            if ev.get("event") == "poison" and "pfn" in ev:
                poisons.append((ev["pfn"], ev["t_ns"]))
            continue
        ev = json_of(VMM, line)
        if ev:
            if ev.get("event") == "vmm_start":
                runs.append({"start": ev, "lines": place_outer(groups, poisons),
                             "events": [], "inner": []})
                groups, poisons = [], []
            elif runs:
                runs[-1]["events"].append(ev)
                text = linux_event(ev)
                if text:
                    runs[-1]["lines"].append((ev.get("t_ns", 0), "vmm", text))
            continue
        m = INNER.match(line)
        if m and runs:
            text = m.group(2)
            k = INNER_KERNEL.match(text)
            text = k.group(1) if k else text
            runs[-1]["inner"].append(text)
            if INNER_SHOWN.match(text) or text.startswith("INNER-ALIVE"):
                runs[-1]["lines"].append((int(m.group(1)), "inner", text))
    return [r for r in runs if r["start"].get("guest") == "linux"]


def linux_story(path):
    """Tell each Linux-guest run of the log; one summary row per run."""
    name = path.rsplit("/", 1)[-1].removesuffix(".log")
    rows = []
    for i, run in enumerate(linux_runs(path), 1):
        st = run["start"]
        print(f"\n=== {name}, run {i}: Linux guest, {st['vcpus']} vCPU, {st['mem'] >> 20} MiB "
              f"{st['backing']}, {st['mce_encoding']} machine checks, early kill: {st['mce_kill']}")
        lines = sorted(run["lines"], key=lambda x: x[0])
        alive = [x for x in lines if x[1] == "inner" and x[2].startswith("INNER-ALIVE")]
        lines = [x for x in lines if not x[2].startswith("INNER-ALIVE")] + alive[-1:]
        lines.sort(key=lambda x: x[0])
        # time 0: the first write into the outer kernel's debugfs
        t0 = next((t for t, who, _ in lines if who == "outer"), lines[0][0] if lines else 0)
        seen = {}
        for t, who, text in lines:
            kind = (who, text.split(":")[0] if who != "vmm" else text[:12])
            seen[kind] = seen.get(kind, 0) + 1
            if seen[kind] == SHOWN_PER_KIND + 1:
                print(f"  {'':>10}  {who:<5} | ... (more like this)")
            if seen[kind] > SHOWN_PER_KIND:
                continue
            print(f"  {(t - t0) / 1e6:+9.1f}ms {who:<5} | {text}")
        injected = [e for e in run["events"] if e.get("event") == "sigbus" and
                    e.get("action") == "inject"]
        inner = run["inner"]
        # search, not match: with 2 vCPUs a kernel line can be printed into the middle
        # of a line a process writes to the console
        recovered = {m.group(1) for m in (re.search(r"Memory failure: (0x[0-9a-f]+): recovery "
                                                    r"action for .*: Recovered", x) for x in inner) if m}
        codes = sorted({m.group(1) for m in (re.search(r"INNER-SIGBUS .*code=(\S+)", x)
                                              for x in inner) if m})
        last_alive = next((x for x in reversed(inner) if x.startswith("INNER-ALIVE")), "")
        exit_ev = next((e for e in run["events"] if e.get("event") == "vmm_exit"), {})
        rows.append({
            "run": f"{name}#{i}",
            "outer signal": ",".join(sorted({e["si_code"].removeprefix("BUS_MCEERR_")
                                             for e in injected})) or "-",
            "injected": len(injected),
            "inner recovered": len(recovered),
            "inner SIGBUS": ",".join(c.removeprefix("BUS_MCEERR_") for c in codes) or "-",
            "survivor": "yes" if "survivor=yes" in last_alive else "NO" if last_alive else "-",
            "inner panic": "YES" if any(x.startswith("Kernel panic") for x in inner) else "no",
            "vmm exit": exit_ev.get("status", "-"),
        })
    return rows


def table(rows, cols):
    width = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in cols}
    print("\n" + "  ".join(c.ljust(width[c]) for c in cols))
    print("  ".join("-" * width[c] for c in cols))
    for r in rows:
        print("  ".join(str(r[c]).ljust(width[c]) for c in cols))


def main():
    linux_rows, rows = [], []
    for p in sys.argv[1:]:
        told = linux_story(p)
        linux_rows += told
        # a Linux-guest log was told above, run by run: only its check count here
        rows.append(story(p, quiet=bool(told)))
    if linux_rows:
        print("\n--- the Linux guest in hwlab-vmm: one row per run")
        table(linux_rows, list(linux_rows[0]))
    table(rows, ["scenario", "signal", "gpa", "injected", "retired", "checksums", "checks"])
    return 0 if all(r["checks"].split("/")[0] == r["checks"].split("/")[1] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
