#!/usr/bin/env python3
"""Print the tests that failed in a meson build directory, each with the
end of its output, so that the last lines of a CI log say what broke."""
import json
import sys

build = sys.argv[1]
with open(f"{build}/meson-logs/testlog.json") as f:
    for line in f:
        t = json.loads(line)
        if t["result"] in ("OK", "SKIP", "EXPECTEDFAIL"):
            continue
        print(f"== {build}: {t['name']}: {t['result']} "
              f"(exit {t.get('returncode')}, {t['duration']:.1f}s)")
        out = (t.get("stdout") or "") + (t.get("stderr") or "")
        for l in out.splitlines()[-15:]:
            print(f"   {l[:200]}")
