#!/usr/bin/env bash
# Counts are conserved: the threads' counts add up to what the vCPUs
# counted (user-only step counts: nothing else runs in user mode).
#
#   stat_conservation.sh VMM CPUS CLONETEST
set -uo pipefail
vmm=$1 cpus=$2 prog=$3
"$vmm" stat -v --cpus "$cpus" --source step -e instructions:u,branches:u -x, \
	-- "$prog" 2>&1 >/dev/null | grep "^vmm: stat: .*: threads " |
	tee /dev/stderr |
	awk '{n++; if ($5 + 0 != $7 + 0 || $5 + 0 == 0) bad++}
	     END {exit !(n == 2 && !bad)}'
