#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Deal tests (stdin, one a line: a name, or a build directory and a
name) over N emulated machines, longest first to the least loaded one, by
the durations in svm-durations.txt: a build's own ("build-asan:NAME", the
directory's last part), else the mean over builds ("NAME"), else DEFAULT
seconds.  Dealt round-robin, one machine of each build ran up to 300 s
longer than the other; by the mean alone, one of the two machines that
run all three builds ran 300 s longer (ASan's runs are the slow ones).
Prints "MACHINE LINE" lines.

    svm-shard.py N < names
    svm-shard.py --update build*/meson-logs/svm-*.json
        rewrite svm-durations.txt from a run's logs
"""
import json
import os
import sys

TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                     'svm-durations.txt')
DEFAULT = 2.0
LISTED = 3.0	# --update keeps the tests that took this long or longer


def load():
    durations = {}
    try:
        with open(TABLE) as f:
            for line in f:
                if line.strip() and not line.startswith('#'):
                    secs, name = line.split(None, 1)
                    durations[name.strip()] = float(secs)
    except FileNotFoundError:
        pass
    return durations


def update(logs):
    runs = {}
    for path in logs:
        build = os.path.basename(os.path.dirname(os.path.dirname(
            os.path.abspath(path))))
        with open(path) as f:
            for line in f:
                t = json.loads(line)
                name = t['name'].split(' / ')[-1]
                runs.setdefault(name, []).append(t['duration'])
                runs.setdefault(f'{build}:{name}', []).append(t['duration'])
    rows = sorted(((sum(d) / len(d), n) for n, d in runs.items()),
                  reverse=True)
    with open(TABLE, 'w') as f:
        f.write('# Seconds per test under QEMU\'s emulated SVM KVM, by '
                'build and the mean\n# over builds, from '
                'tests/kvm/svm-shard.py --update: how svm-run.sh\n'
                '# balances its machines.\n')
        for secs, name in rows:
            if secs >= LISTED:
                f.write(f'{secs:.0f} {name}\n')


def deal(n):
    durations = load()
    lines = [line.strip() for line in sys.stdin if line.strip()]

    def secs(line):
        words = line.split()
        name = words[-1]
        if len(words) > 1:
            own = f'{os.path.basename(words[0].rstrip("/"))}:{name}'
            if own in durations:
                return durations[own]
        return durations.get(name, DEFAULT)

    lines.sort(key=lambda t: -secs(t))
    load_of = [0.0] * n
    for line in lines:
        m = min(range(n), key=lambda i: load_of[i])
        load_of[m] += secs(line)
        print(m, line)


if __name__ == '__main__':
    if len(sys.argv) > 1 and sys.argv[1] == '--update':
        update(sys.argv[2:])
    elif len(sys.argv) == 2 and sys.argv[1].isdigit() and int(sys.argv[1]) > 0:
        deal(int(sys.argv[1]))
    else:
        sys.exit(__doc__)
