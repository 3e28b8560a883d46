#!/usr/bin/env python3
"""One closing line for scripts/test.sh: how many tests CTest skipped and why.

  ctest_skips.py build/Testing/Temporary/LastTest.log

GoogleTest cases that call GTEST_SKIP are registered with SKIP_REGULAR_EXPRESSION (tests/CMakeLists.txt),
so CTest counts them as skipped; their reason is the message GoogleTest prints after "Skipped".
"""
import collections
import re
import sys


def skipped_tests(log_text):
    """[(test name, reason)] for every test in a LastTest.log whose output says it was skipped."""
    out = []
    # each test's block starts with 'N/M Testing: name' and ends with '"name" end time'
    for m in re.finditer(r"^\d+/\d+ Testing: (\S+)\n(.*?)^\"\1\" end time", log_text, re.S | re.M):
        name, body = m.group(1), m.group(2)
        if "[  SKIPPED ]" not in body and "Test Skipped" not in body:
            continue
        reason = re.search(r"Skipped\n(.+)", body)
        out.append((name, reason.group(1).strip() if reason else "no reason given"))
    return out


def main():
    try:
        text = open(sys.argv[1], errors="replace").read()
    except OSError as e:
        print(f"skipped tests: cannot read the CTest log ({e})")
        return 1
    skipped = skipped_tests(text)
    if not skipped:
        print("skipped tests: none")
        return 0
    reasons = collections.Counter(r for _, r in skipped)
    why = "; ".join(f"{n} × {r}" for r, n in reasons.most_common())
    print(f"skipped tests: {len(skipped)} — {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
