#!/usr/bin/env bash
# scripts/check-layers.py must fail when a layer rule is broken, not only
# pass on today's tree: build a small tree with ninja, the way the real
# build records what the compiler read, once keeping to the rules and then
# breaking each vmm/ rule in turn, and pmu/'s.
#
#   check_layers_test.sh CHECK_LAYERS_PY CC
set -euo pipefail
check=$1 cc=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
src=$tmp/src build=$tmp/build
mkdir -p "$src"/{pmu,guest-kernel,uapi,vmm/core,vmm/tools,vmm/bench} "$build"

echo 'int u;' >"$src/uapi/u.h"
echo 'int t;' >"$src/vmm/tools/t.h"
echo 'int b;' >"$src/vmm/bench/b.h"
echo '#include "u.h"' >"$src/pmu/p.c"
echo '#include "u.h"' >"$src/guest-kernel/g.c"
printf '#include "u.h"\n' >"$src/vmm/core/c.c"
printf '#include "u.h"\n' >"$src/vmm/tools/t.c"

cat >"$build/build.ninja" <<NINJA
rule cc
  command = $cc -nostdinc -I../src/uapi -I../src/vmm/tools -I../src/vmm/bench -MD -MF \$out.d -c \$in -o \$out
  depfile = \$out.d
  deps = gcc
build pmu/p.o: cc ../src/pmu/p.c
build guest-kernel/g.o: cc ../src/guest-kernel/g.c
build vmm/c.o: cc ../src/vmm/core/c.c
build vmm/t.o: cc ../src/vmm/tools/t.c
NINJA

run() {	# run WANT_STATUS WANT_REGEX: build, then check
	local out status=0
	ninja -C "$build" >/dev/null
	out=$(python3 "$check" "$src" "$build" 2>&1) || status=$?
	if [ "$status" != "$1" ] || ! grep -Eq -- "$2" <<<"$out"; then
		echo "FAIL: want status $1 and /$2/, got $status:"
		echo "$out"
		exit 1
	fi
	echo "ok: $out"
}

run 0 '^layers: ok \(1 pmu, 1 vmm/core, 1 guest-kernel'
printf '#include "u.h"\n#include "t.h"\n' >"$src/vmm/core/c.c"
run 1 '^layers: vmm/c\.o: vmm/core/ reads vmm/tools/t\.h$'
printf '#include "u.h"\n#include "b.h"\n' >"$src/vmm/core/c.c"
run 1 '^layers: vmm/c\.o: vmm/core/ reads vmm/bench/b\.h$'
printf '#include "u.h"\n' >"$src/vmm/core/c.c"
printf '#include "u.h"\n#include "b.h"\n' >"$src/vmm/tools/t.c"
run 1 '^layers: vmm/t\.o: vmm/tools/ reads vmm/bench/b\.h$'
printf '#include "u.h"\n#include "t.h"\n' >"$src/vmm/tools/t.c"
run 0 '^layers: ok'
printf '#include "u.h"\n#include "t.h"\n' >"$src/pmu/p.c"
run 1 '^layers: pmu/p\.o: pmu/ reads vmm/tools/t\.h$'
