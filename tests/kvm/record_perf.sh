#!/usr/bin/env bash
# The perf.data we write opens in the distribution's perf (linux-perf).
#
#   record_perf.sh VMM HOT PERF
set -uo pipefail
vmm=$1 prog=$2 perf=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$vmm" record --format perf --source step -e instructions:u -c 200 \
	-o "$tmp/perf.data" -- "$prog" 2000 >/dev/null || exit 1
"$perf" report -i "$tmp/perf.data" --stdio 2>/dev/null | tee /dev/stderr |
	grep -q '\[\.\] hot'
