#!/usr/bin/env bash
# One libvpmu test in the guest under the step source (exact): its output
# must hold the line that says it passed.
#
#   vpmu_run.sh VMM VPMU_TEST CPUS PASS_REGEX TEST_ARGS...
set -uo pipefail
vmm=$1 prog=$2 cpus=$3 pass=$4
shift 4
# -v: a timeout dumps each vCPU's registers to stderr (vpmu-threads-2cpu
# has hung in loaded full runs; where it waits is not known yet).
"$vmm" run -v --source step --cpus "$cpus" --timeout 200 -- "$prog" "$@" |
	tee /dev/stderr | grep -q -- "$pass"
