#!/usr/bin/env python3
"""Print the tests that failed in meson test logs (meson-logs/*.json), each
with the end of its output, so that the last lines of a CI log say what
broke, then one line: "test: N passed, N failed, N skipped".

A skip is a failure: ./test gives every test what it needs (a KVM above
all, the host's or QEMU's), so a skip can only hide a test that did not
run, or a crash reported with exit status 77.  Exits 1 when any test
failed or skipped, or a log is missing; else 0.

    failed-tests.py LOG.json..."""
import json
import sys

passed = failed = skipped = 0
for log in sys.argv[1:]:
    try:
        f = open(log)
    except OSError as e:
        print(f"== {log}: no test log ({e.strerror}): the run did not finish")
        failed += 1
        continue
    with f:
        for line in f:
            t = json.loads(line)
            if t["result"] in ("OK", "EXPECTEDFAIL"):
                passed += 1
                continue
            if t["result"] == "SKIP":
                skipped += 1
            else:
                failed += 1
            print(f"== {log}: {t['name']}: {t['result']} "
                  f"(exit {t.get('returncode')}, {t['duration']:.1f}s)")
            out = (t.get("stdout") or "") + (t.get("stderr") or "")
            for l in out.splitlines()[-15:]:
                print(f"   {l[:200]}")
print(f"test: {passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed or skipped else 0)
