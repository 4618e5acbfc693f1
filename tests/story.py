#!/usr/bin/env python3
"""Turn outer-VM scenario logs into a readable recovery story.

Usage: tests/story.py LOG...   (console logs written by outer-qemu/boot.sh)
Prints, per scenario, the chain from the kernel's memory-failure messages
through the VMM's events to the guest's own reports, then a summary table.
A scenario that booted a Linux guest in hwlab-vmm (linux_guest) is told two
levels deep, run by run and in time order: the outer kernel, the VMM, the
inner kernel and the inner processes, each line at its time on the outer
VM's clock, which the VMM's report lines and its --console-stamp share.
Consecutive lines that differ only in their places and times (a burst told
page by page) fold into one line with a count, so each story fits a screen;
fold() and its key are below, tests/story_test.py tests them.
"""
import json
import re
import sys

KERNEL_TIMED = re.compile(r"^\[\s*([\d.]+)\] (Memory failure: .*|Injecting memory failure.*)$")
VMM = re.compile(r"^  vmm: (\{.*\})$")
# an inner console line as show_console echoes it: the VMM's stamp, the text
INNER = re.compile(r"^  con: \[t_ns=(\d+)\] (.*)$")
INNER_KERNEL = re.compile(r"^\[\s*[\d.]+\] (.*)$")
# The guest's own lines are kernel log records (guest-linux/init's say):
# whole, after their printk time, which INNER_KERNEL takes off. Read in full
# or not at all, so that a line another one was printed into (the old
# console writer's "INNER-SIGBUS tag[    6.04] Memory failure: ...") is
# never read for one.
INNER_SIGBUS = re.compile(r"^INNER-SIGBUS tag=\S+ pid=\d+ code=(BUS_MCEERR_A[RO]|-?\d+) "
                          r"addr=0x[0-9a-f]+ lsb=\d+ idx=-?\d+$")
INNER_ALIVE = re.compile(r"^INNER-ALIVE survivor=(yes|no) hardware_corrupted_kb=\d*"
                         r"( anon_huge_kb=\d*)?$")
RECOVERED = re.compile(r"^Memory failure: (0x[0-9a-f]+): recovery action for .*: Recovered$")
INNER_SHOWN = re.compile(r"^(mce: |Memory failure: |Kernel panic|Oops|BUG: |INNER-SIGBUS |"
                         r"INNER-EXIT |INNER-RESTART |INNER-CORRUPT )")
# so many lines of one kind in a run are enough to tell it, after folding
# (lines of one kind that fold do not reach this; lines that differ in more
# than their numbers, say the inner kernel's mce reports of a burst, do)
SHOWN_PER_KIND = 12

# The folding key. A poisoned range is told page by page: the kernel prints
# the same lines for each pfn, the VMM reports the same event for each GPA.
# Consecutive lines fold into one when they are equal once their places and
# times are taken out; everything else stays in the key, so a line that
# differs in kind (its words), result ("Recovered" or "Failed"), process
# (a pid, "hwlab-vmm:179"), signal, vCPU, bank, lsb or count never folds
# into its neighbours. A place or time is:
#   - a 0x number (pfn, GPA, hva, ADDR, addr=), except a register's value:
#     MCi_STATUS, MCG_STATUS, MISC and MCG_CAP say what kind of error it was;
#   - the bare hex the kernel prints after ADDR, TSC and "at" (the mce
#     lines), and the decimal after TIME;
#   - a decimal fraction: a latency or a time ("9.38 ms after the signal").
PLACE_OR_TIME = re.compile(
    r"(?<!STATUS )(?<!MISC )(?<!MCG_CAP )\b0x[0-9a-fA-F]+\b"
    r"|(?<=ADDR )[0-9a-f]+\b|(?<=TSC )[0-9a-f]+\b|(?<=TIME )\d+\b"
    r"|(?<= at )(?=[0-9a-f]*\d)[0-9a-f]+\b"
    r"|\b\d+\.\d+\b")
# A page's event is up to three lines (the kernel's "Injecting", "Sending
# SIGBUS", "recovery action"; the VMM's hook and SIGBUS in turn), so a cycle
# of up to this many lines folds as well as a single repeated line.
FOLD_CYCLE = 4


def json_of(pattern, line):
    """The JSON object a line of this kind carries, or None."""
    m = pattern.match(line)
    if not m:
        return None
    try:
        return json.loads(m.group(1))
    except json.JSONDecodeError:
        return None


def fold_key(text):
    """A line's text with its places and times taken out, and those values."""
    values = []

    def take(m):
        values.append(m.group(0))
        return "\0"
    return PLACE_OR_TIME.sub(take, text), values


def fold_group(group, cycle):
    """One line for lines of one key: the first one's time, each place or
    time that varies as first..last, the count and the time they spanned."""
    t, who, text = group[0]
    template = fold_key(text)[0]
    slots = zip(*(fold_key(x[2])[1] for x in group))
    parts = template.split("\0")
    shown = parts[0]
    for vals, part in zip(slots, parts[1:]):
        shown += (vals[0] if len(set(vals)) == 1 else f"{vals[0]}..{vals[-1]}") + part
    times = [x[0] for x in group if x[0] is not None]
    return {"t": t, "who": who, "text": shown, "count": len(group),
            "span": times[-1] - times[0] if len(times) == len(group) else None,
            "cycle": cycle}


def fold(items):
    """Fold consecutive (time, who, text) items that differ only in their
    places and times, a single line or a cycle of up to FOLD_CYCLE lines
    repeating (the longest stretch wins, the shorter cycle on a tie). Each
    item becomes a dict with t, who, text, count, span (ns, or None when a
    time is missing) and cycle (on a cycle's first line: its length)."""
    keys = [(who, fold_key(text)[0]) for _, who, text in items]
    out, i = [], 0
    while i < len(items):
        best, repeats = 1, 1
        for p in range(1, FOLD_CYCLE + 1):
            r = 1
            while i + (r + 1) * p <= len(items) and \
                    keys[i + r * p:i + (r + 1) * p] == keys[i:i + p]:
                r += 1
            if r > 1 and r * p > best * repeats:
                best, repeats = p, r
        for j in range(best):
            group = [items[i + k * best + j] for k in range(repeats)]
            out.append(fold_group(group, best if j == 0 and repeats > 1 and best > 1 else 0))
        i += best * repeats
    return out


def folded_text(f):
    """A folded line's text with its count, span and cycle."""
    if f["count"] == 1:
        return f["text"]
    text = f"{f['text']}  ×{f['count']}"
    if f["span"] is not None:
        text += f" in {f['span'] / 1e6:.1f} ms"
    if f["cycle"]:
        rest = f"next {f['cycle'] - 1} lines" if f["cycle"] > 2 else "next line"
        text += f", in turn with the {rest}"
    return text


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
    # its time is the line's, not part of what it says (and lines that
    # differ only in it fold)
    return f"{kind}: " + ", ".join(f"{k} {v}" for k, v in ev.items() if k not in ("event", "t_ns"))


def story(path, quiet=False):
    name = path.rsplit("/", 1)[-1].removesuffix(".log")
    row = {"scenario": name, "signal": "-", "gpa": "-", "injected": 0,
           "retired": 0, "checksums": "-", "checks": "0/0"}
    passed = failed = 0
    # (time in ns or None, who, text); the kernel's on printk's clock, the
    # VMM's on CLOCK_MONOTONIC: each is compared only with its own kind
    lines, kernel = [], []
    with open(path, errors="replace") as f:
        log = [line.rstrip("\n") for line in f]
    for line in log:
        m = KERNEL_TIMED.match(line)
        if m:
            # The VMM's report reaches the console only when it exits; tell
            # the kernel's side where it happened, right after the poisoning.
            kernel.append((int(float(m.group(1)) * 1e9), "kernel", m.group(2)))
            continue
        ev = json_of(VMM, line)
        if ev:
            text = describe(ev)
            if text:
                who = "guest" if ev["event"].startswith("guest") else "vmm"
                lines.append((ev.get("t_ns"), who, text))
            if ev["event"] in ("poison_hook", "sigbus") and kernel:
                lines += kernel
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
            lines.append((None, "check", line[len('HWLAB-CHECK '):]))
    lines += kernel
    if not quiet:
        print(f"\n=== {name}")
        for f in fold(lines):
            print(f"  {f['who']:<6} | {folded_text(f)}")
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
    with open(path, errors="replace") as f:
        log = [line.rstrip("\n") for line in f]
    for line in log:
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
        for f in fold(lines):
            who, text = f["who"], f["text"]
            kind = (who, text.split(":")[0] if who != "vmm" else text[:12])
            seen[kind] = seen.get(kind, 0) + 1
            if seen[kind] == SHOWN_PER_KIND + 1:
                print(f"  {'':>10}  {who:<5} | ... (more like this)")
            if seen[kind] > SHOWN_PER_KIND:
                continue
            print(f"  {(f['t'] - t0) / 1e6:+9.1f}ms {who:<5} | {folded_text(f)}")
        injected = [e for e in run["events"] if e.get("event") == "sigbus" and
                    e.get("action") == "inject"]
        inner = run["inner"]
        recovered = {m.group(1) for m in map(RECOVERED.match, inner) if m}
        codes = sorted({m.group(1) for m in map(INNER_SIGBUS.match, inner) if m})
        last_alive = next((m.group(1) for m in map(INNER_ALIVE.match, reversed(inner)) if m), "")
        exit_ev = next((e for e in run["events"] if e.get("event") == "vmm_exit"), {})
        rows.append({
            "run": f"{name}#{i}",
            "outer signal": ",".join(sorted({e["si_code"].removeprefix("BUS_MCEERR_")
                                             for e in injected})) or "-",
            "injected": len(injected),
            "inner recovered": len(recovered),
            "inner SIGBUS": ",".join(c.removeprefix("BUS_MCEERR_") for c in codes) or "-",
            "survivor": {"yes": "yes", "no": "NO"}.get(last_alive, "-"),
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
