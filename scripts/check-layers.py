#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check the layer rules in what the compiler actually read.

usage: check-layers.py SOURCE_ROOT BUILD_DIR

The header dependencies ninja recorded for every object built
(`ninja -t deps`) must keep to docs/design.md's layers:

  * code from pmu/ never reads a vmm/ header;
  * code from vmm/core/ never reads a vmm/tools/ or vmm/bench/ header, and
    code from vmm/tools/ never a vmm/bench/ one (vmm/meson.build puts all
    of vmm/'s folders on one include path, so only this keeps it so);
  * guest code (objects of guest-kernel/ and userlib/) reads, inside the
    source tree, only uapi/, common/ and its own folder;
  * the guest kernel (built -nostdinc) reads no host C library header.

Exit status 0 when every rule holds, 1 with one line per broken rule (and
when there is nothing to check, so a build that records no dependencies
cannot pass by accident).
"""
import os
import subprocess
import sys

SHARED = ('uapi', 'common')
GUEST = ('guest-kernel', 'userlib')
HOST_LIBC = ('/usr/include/', '/usr/local/include/')
# vmm/'s layers: the folders each one's code must not read.
VMM_NEVER = {
    'vmm/core': ('vmm/tools', 'vmm/bench'),
    'vmm/tools': ('vmm/bench',),
}


def deps_by_object(build):
    """{object path relative to build: [dependency paths as recorded]}"""
    out = subprocess.run(['ninja', '-C', build, '-t', 'deps'], check=True,
                         capture_output=True, text=True).stdout
    objs, cur = {}, None
    for line in out.splitlines():
        if not line.strip():
            cur = None
        elif not line[0].isspace():
            cur = line.split(':', 1)[0]
            objs[cur] = []
        elif cur is not None:
            objs[cur].append(line.strip())
    return objs


def top(path):
    """The top-level folder of a source-tree path, or None if outside."""
    if path.startswith('..' + os.sep) or os.path.isabs(path) or path == '..':
        return None
    return path.split(os.sep, 1)[0]


def vmm_layer(path):
    """'vmm/core', 'vmm/tools', ... for a path in a folder of vmm/."""
    parts = path.split(os.sep)
    if parts[0] != 'vmm' or len(parts) < 3:
        return None
    return parts[0] + '/' + parts[1]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[2])
    src = os.path.realpath(sys.argv[1])
    build = os.path.realpath(sys.argv[2])
    errors = []
    checked = {'pmu': 0, 'guest-kernel': 0, 'userlib': 0, 'vmm/core': 0}

    for obj, deps in sorted(deps_by_object(build).items()):
        # Entries of objects no longer built linger in the log.
        if not deps or not os.path.exists(os.path.join(build, obj)):
            continue
        paths = [os.path.normpath(os.path.join(build, d)) for d in deps]
        rel = [os.path.relpath(p, src) for p in paths]
        owner = top(os.path.relpath(os.path.join(build, obj), build))
        source = top(rel[0])
        if source == 'pmu':
            checked['pmu'] += 1
            for r in rel:
                if top(r) == 'vmm':
                    errors.append(f'{obj}: pmu/ reads {r}')
        layer = vmm_layer(rel[0])
        if layer in VMM_NEVER:
            checked['vmm/core'] += layer == 'vmm/core'
            for r in rel:
                if vmm_layer(r) in VMM_NEVER[layer]:
                    errors.append(f'{obj}: {layer}/ reads {r}')
        if owner not in GUEST:
            continue
        checked[owner] += 1
        for p, r in zip(paths, rel):
            t = top(r)
            if p.startswith(build + os.sep):
                continue	# generated in the build tree
            if t is not None and t not in SHARED + (owner,):
                errors.append(f'{obj}: guest code reads {r}')
            if owner == 'guest-kernel' and p.startswith(HOST_LIBC):
                errors.append(f'{obj}: the guest kernel reads host '
                              f'header {p}')

    for what in ('pmu', 'guest-kernel', 'vmm/core'):
        if not checked[what]:
            errors.append(f'no {what}/ objects with recorded dependencies '
                          f'in {build}: build it first')
    for e in errors:
        print('layers:', e)
    if not errors:
        print('layers: ok ({} pmu, {} vmm/core, {} guest-kernel, {} userlib '
              'objects)'.format(checked['pmu'], checked['vmm/core'],
                                checked['guest-kernel'], checked['userlib']))
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
