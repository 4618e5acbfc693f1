#!/usr/bin/env python3
"""Turn outer-VM scenario logs into a readable recovery story.

Usage: tests/story.py LOG...   (console logs written by outer-qemu/boot.sh)
Prints, per scenario, the chain from the kernel's memory-failure messages
through the VMM's events to the guest's own reports, then a summary table.
"""
import json
import re
import sys

KERNEL = re.compile(r"^\[\s*[\d.]+\] (Memory failure: .*|Injecting memory failure.*)$")
VMM = re.compile(r"^  vmm: (\{.*\})$")


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
    if kind == "guest_pass":
        return None
    if kind == "guest_done":
        return (f"guest vCPU {ev['vcpu']} done: {ev['passes']} passes, "
                f"{ev['pages_retired']} page(s) retired, checksums "
                f"{'intact' if ev['checksum_ok'] else 'BROKEN'}")
    if kind == "vmm_exit":
        return (f"VMM exits: {ev['status']}, {ev['injected']} machine check(s) injected, "
                f"{ev['poisoned_pages']} poisoned page(s) on its list")
    return f"{kind}: {json.dumps(ev)}"


def story(path):
    name = path.rsplit("/", 1)[-1].removesuffix(".log")
    row = {"scenario": name, "signal": "-", "gpa": "-", "injected": 0,
           "retired": 0, "checksums": "-", "checks": "0/0"}
    passed = failed = 0
    kernel = []
    print(f"\n=== {name}")
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        m = KERNEL.match(line)
        if m:
            # The VMM's report reaches the console only when it exits; tell
            # the kernel's side where it happened, right after the poisoning.
            kernel.append(f"  kernel | {m.group(1)}")
            continue
        m = VMM.match(line)
        if m:
            try:
                ev = json.loads(m.group(1))
            except json.JSONDecodeError:
                continue
            text = describe(ev)
            if text:
                who = "guest " if ev["event"].startswith("guest") else "vmm   "
                print(f"  {who} | {text}")
            if ev["event"] in ("poison_hook", "sigbus") and kernel:
                print("\n".join(kernel))
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
            print(f"  check  | {line[len('HWLAB-CHECK '):]}")
    if kernel:
        print("\n".join(kernel))
    row["checks"] = f"{passed}/{passed + failed}"
    return row


def main():
    rows = [story(p) for p in sys.argv[1:]]
    cols = ["scenario", "signal", "gpa", "injected", "retired", "checksums", "checks"]
    width = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in cols}
    print("\n" + "  ".join(c.ljust(width[c]) for c in cols))
    print("  ".join("-" * width[c] for c in cols))
    for r in rows:
        print("  ".join(str(r[c]).ljust(width[c]) for c in cols))
    return 0 if all(r["checks"].split("/")[0] == r["checks"].split("/")[1] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
