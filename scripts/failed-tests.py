#!/usr/bin/env python3
"""Print the tests that failed in a meson build directory, each with the
end of its output, so that the last lines of a CI log say what broke.

With --skips-fail a skipped test counts as failed: when /dev/kvm exists
no test may skip (a skip would hide, for example, a crash reported with
exit status 77).  Exits 1 when it printed any test, else 0."""
import json
import sys

args = [a for a in sys.argv[1:] if not a.startswith("--")]
skips_fail = "--skips-fail" in sys.argv
ok = {"OK", "EXPECTEDFAIL"} | (set() if skips_fail else {"SKIP"})
bad = 0
with open(f"{args[0]}/meson-logs/testlog.json") as f:
    for line in f:
        t = json.loads(line)
        if t["result"] in ok:
            continue
        bad += 1
        print(f"== {args[0]}: {t['name']}: {t['result']} "
              f"(exit {t.get('returncode')}, {t['duration']:.1f}s)")
        out = (t.get("stdout") or "") + (t.get("stderr") or "")
        for l in out.splitlines()[-15:]:
            print(f"   {l[:200]}")
sys.exit(1 if bad else 0)
