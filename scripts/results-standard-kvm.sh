#!/usr/bin/env bash
# Regenerate docs/results-standard-kvm.{md,json}: the suite's "where the
# time goes" part (`vmm bench suite --parts kernel`) on a standard KVM,
# QEMU's emulated AMD SVM (scripts/qemu-svm.sh), beside docs/results.md
# from this host's kvm_pvm.  Kernel-entry counts (system calls by name,
# page faults, timer, IPIs) should be the same on both; user code runs
# 5-10x slower under QEMU's software CPU, so its times are not comparable.
#
#   scripts/results-standard-kvm.sh [BUILD_DIR] [SIZE]
set -euo pipefail
dir=${1:-build}
size=${2:-train}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
ninja -C "$dir" >/dev/null
"$top/scripts/qemu-svm.sh" --cpus 2 --timeout 1800 -- \
	"$dir/vmm/vmm" bench suite --parts kernel --size "$size" --reps 1 \
	--markdown docs/results-standard-kvm.md \
	--json docs/results-standard-kvm.json
