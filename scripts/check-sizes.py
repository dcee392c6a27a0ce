#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Keep vmm/ readable: no file over 700 lines, no function over 120.

usage: check-sizes.py DIR...

A function is counted from its opening brace to its closing brace, both
in column 0 as kernel style puts them.  Exit status 1 with one line per
file or function over the limit.
"""
import os
import re
import sys

MAX_FILE = 700
MAX_FUNC = 120
SIG = re.compile(r'^[A-Za-z_].*\(')


def check(path):
    errors = []
    with open(path, encoding='utf-8', errors='replace') as f:
        lines = f.read().split('\n')
    if len(lines) - 1 > MAX_FILE:
        errors.append(f'{path}: {len(lines) - 1} lines (at most {MAX_FILE})')
    sig, start = None, None
    for n, line in enumerate(lines, 1):
        if SIG.match(line):
            sig = line
        elif line.startswith('{'):
            start = n
        elif line.startswith('}') and start is not None:
            if n - start + 1 > MAX_FUNC:
                errors.append(f'{path}:{start}: function of {n - start + 1} '
                              f'lines (at most {MAX_FUNC}): {sig}')
            start = None
    return errors


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__.strip().splitlines()[2])
    errors, files = [], 0
    for top in sys.argv[1:]:
        for root, _, names in os.walk(top):
            for name in sorted(names):
                if name.endswith(('.c', '.h')):
                    files += 1
                    errors += check(os.path.join(root, name))
    for e in errors:
        print('sizes:', e)
    if not files:
        print('sizes: no C files under', ' '.join(sys.argv[1:]))
        return 1
    if not errors:
        print(f'sizes: ok ({files} files)')
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
