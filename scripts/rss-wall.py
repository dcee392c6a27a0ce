#!/usr/bin/env python3
# rss-wall.py N CMD...: run CMD N times (stdout and stderr to /dev/null)
# and print the median wall time and the median and largest maximum
# resident set of the process (wait4's ru_maxrss), with the last exit
# status.  How docs/specification.md's "Memory" table was measured.
import os
import statistics
import sys
import time

n = int(sys.argv[1])
cmd = sys.argv[2:]
walls, rss, status = [], [], 0
for _ in range(n):
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        fd = os.open('/dev/null', os.O_WRONLY)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.execvp(cmd[0], cmd)
    _, st, ru = os.wait4(pid, 0)
    walls.append((time.monotonic() - t0) * 1e3)
    rss.append(ru.ru_maxrss)
    status = os.waitstatus_to_exitcode(st)
print("median %.1f ms (min %.1f), max RSS median %d KiB (max %d), status %d"
      % (statistics.median(walls), min(walls), statistics.median(rss),
         max(rss), status))
