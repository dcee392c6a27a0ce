#!/usr/bin/env bash
# Counting a CPU-bound program with tsc/offset adds a constant handful of
# VM exits (configuration, per-thread report), none that grow with its run
# time: the structural reason its overhead is near zero.
#
#   counting_exits.sh VMM PROGRAM ARGS...
set -uo pipefail
vmm=$1
shift
"$vmm" bench overhead -n 2 --json "$@" | tee /dev/stderr | tr -d '{},' |
	awk '{for (i = 1; i < NF; i++) v[$i] = $(i + 1)}
	     END {p = v["\"plain_exits\":"]; d = v["\"counted_exits\":"] - p
		  exit !(p > 0 && d >= 0 && d <= 10)}'
