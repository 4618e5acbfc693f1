#!/usr/bin/env python3
"""Unit tests of tests/story.py's folding, on tiny made-up lines and on the
fixtures in tests/fixtures/story/ (run by tests/host/demo_story.sh).

Usage: tests/story_test.py [-v]
"""
import contextlib
import io
import os
import sys
import unittest

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.dont_write_bytecode = True  # no tests/__pycache__ in the work tree
import story  # noqa: E402

FIXTURES = os.path.join(here, "fixtures", "story")


def page(i, result="Recovered", pid=50):
    """The outer kernel's three lines for page i of a burst, 1 ms apart."""
    pfn, t = 0x3fb00 + i, 1_000_000_000 + i * 1_000_000
    return [(t, "kernel", f"Injecting memory failure for pfn {pfn:#x} at process "
                          f"virtual address {0x7f0000000000 + i * 0x1000:#x}"),
            (t + 100, "kernel", f"Memory failure: {pfn:#x}: Sending SIGBUS to "
                                f"hwlab-vmm:{pid} due to hardware memory corruption"),
            (t + 200, "kernel", f"Memory failure: {pfn:#x}: recovery action for "
                                f"dirty LRU page: {result}")]


def texts(folded):
    return [story.folded_text(f) for f in folded]


class FoldKey(unittest.TestCase):
    def test_places_and_times_go(self):
        key, values = story.fold_key("SIGBUS BUS_MCEERR_AO at hva 0x7f15b098b000 -> GPA "
                                     "0x620000, lsb 12: inject 9.38 ms after the signal")
        self.assertEqual(values, ["0x7f15b098b000", "0x620000", "9.38"])
        self.assertIn("lsb 12", key)

    def test_registers_pids_and_words_stay(self):
        text = ("inject vMCE into vCPU 0 (MCi_STATUS 0xbd000000000000c0, MCG_STATUS 0x5, "
                "MISC 0x8c) Sending SIGBUS to hwlab-vmm:179 MCG_CAP 0x100010a")
        key, values = story.fold_key(text)
        self.assertEqual((key, values), (text, []))

    def test_the_kernels_bare_hex(self):
        _, values = story.fold_key("mce: [Hardware Error]: TSC 794c01148 ADDR 19a6000 MISC 8c")
        self.assertEqual(values, ["794c01148", "19a6000"])
        _, values = story.fold_key("mce: Uncorrected hardware memory error in user-access "
                                   "at 19a6000")
        self.assertEqual(values, ["19a6000"])


class Fold(unittest.TestCase):
    def test_a_repeated_line_folds_with_count_range_time_and_span(self):
        items = [(1_000_000 * i, "vmm", f"VMM test hook poisons GPA {0x600000 + i * 0x1000:#x} "
                                        f"with madvise") for i in range(1, 8)]
        folded = story.fold(items)
        self.assertEqual(len(folded), 1)
        self.assertEqual(folded[0]["t"], 1_000_000)
        self.assertEqual(texts(folded), ["VMM test hook poisons GPA 0x601000..0x607000 with "
                                         "madvise  ×7 in 6.0 ms"])

    def test_a_cycle_of_three_folds_line_by_line(self):
        items = sum((page(i) for i in range(40)), [])
        self.assertEqual(texts(story.fold(items)), [
            "Injecting memory failure for pfn 0x3fb00..0x3fb27 at process virtual address "
            "0x7f0000000000..0x7f0000027000  ×40 in 39.0 ms, in turn with the next 2 lines",
            "Memory failure: 0x3fb00..0x3fb27: Sending SIGBUS to hwlab-vmm:50 due to hardware "
            "memory corruption  ×40 in 39.0 ms",
            "Memory failure: 0x3fb00..0x3fb27: recovery action for dirty LRU page: Recovered  "
            "×40 in 39.0 ms"])

    def test_a_failed_page_stays_on_its_own(self):
        items = sum((page(i, "Failed" if i == 3 else "Recovered") for i in range(8)), [])
        shown = texts(story.fold(items))
        self.assertIn("Memory failure: 0x3fb03: recovery action for dirty LRU page: Failed", shown)
        recovered = [x for x in shown if "Recovered" in x]
        self.assertEqual([x.split("  ×")[1].split()[0] for x in recovered], ["3", "4"])

    def test_another_process_stays_on_its_own(self):
        items = sum((page(i, pid=51 if i == 6 else 50) for i in range(8)), [])
        shown = texts(story.fold(items))
        self.assertIn("Memory failure: 0x3fb06: Sending SIGBUS to hwlab-vmm:51 due to hardware "
                      "memory corruption", shown)
        self.assertEqual(sum("hwlab-vmm:50" in x for x in shown), 2)

    def test_different_lines_are_left_alone(self):
        items = [(1, "inner", "mce: [Hardware Error]: CPU 0: Machine Check Exception: 7 Bank 9"),
                 (2, "inner", "Memory failure: 0x19a6: recovery action for dirty LRU page: "
                              "Recovered"),
                 (3, "outer", "Memory failure: 0x19a6: recovery action for dirty LRU page: "
                              "Recovered")]
        self.assertEqual([f["count"] for f in story.fold(items)], [1, 1, 1])

    def test_no_span_without_times(self):
        folded = story.fold([(None, "check", "FAIL x: 0x1"), (None, "check", "FAIL x: 0x2")])
        self.assertEqual(texts(folded), ["FAIL x: 0x1..0x2  ×2"])


class Fixtures(unittest.TestCase):
    def told(self, name):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            story.story(os.path.join(FIXTURES, name))
        return out.getvalue().splitlines()

    def test_burst(self):
        lines = self.told("burst.log")
        self.assertIn("  kernel | Memory failure: 0x3fb00..0x3fb07: recovery action for dirty "
                      "LRU page: Recovered  ×8 in 7.0 ms", lines)
        self.assertEqual(len(lines), 9)

    def test_mixed(self):
        lines = self.told("mixed.log")
        failed = lines.index("  kernel | Memory failure: 0x3fb03: recovery action for dirty "
                             "LRU page: Failed")
        self.assertTrue(lines[failed - 3].endswith("Recovered  ×3 in 2.0 ms"))
        self.assertTrue(lines[failed + 3].endswith("Recovered  ×2 in 1.0 ms"))

    def test_linux_reads_whole_records_only(self):
        # run 1: the guest's lines as kernel log records, whole; run 2: the
        # old console writer's, a kernel message printed into each
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rows = story.linux_story(os.path.join(FIXTURES, "linux_records.log"))
        whole, cut = rows
        self.assertEqual((whole["inner SIGBUS"], whole["inner recovered"], whole["survivor"]),
                         ("AR", 1, "yes"))
        # nothing read from a cut line: no "A[" for a code, no survivor
        self.assertEqual((cut["inner SIGBUS"], cut["inner recovered"], cut["survivor"]),
                         ("-", 0, "-"))


if __name__ == "__main__":
    unittest.main()
