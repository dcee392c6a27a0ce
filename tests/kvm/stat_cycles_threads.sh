#!/usr/bin/env bash
# `vmm stat --per-thread -e cycles` (tsc source, offset policy) on a
# program with THREADS workers on 2 vCPUs: one line per thread, main
# included, each with cycles of its own, and `<not supported>` for an event
# the source cannot count, as perf prints it.
#
#   stat_cycles_threads.sh VMM PROG THREADS
set -uo pipefail
vmm=$1 prog=$2 n=$3
out=$("$vmm" stat --timeout 200 --per-thread --cpus 2 -x, \
	-e cycles,instructions -- "$prog" test "$n" 2>&1 >/dev/null)
echo "$out"
awk -F, -v want=$((n + 1)) '
	$4 == "cycles" { if ($2 + 0 > 0) ok[$1] = 1; lines++ }
	$4 == "instructions" && $2 == "<not supported>" { ns++ }
	END {
		for (t in ok) threads++
		exit !(threads == want && lines == want && ns == want)
	}' <<<"$out"
