#!/usr/bin/env bash
# vmm bench suite's step-vs-oracle part: for each workload named, the
# step source's instructions:u and the ptrace oracle's, at sizes micro and
# tiny, must differ by exactly the same start-up amount (work difference
# 0, read from the suite's CSV), and the counts must be real.
#
#   check_bench_step.sh VMM STEPCOUNT WORKLOAD[,WORKLOAD...]
set -uo pipefail
vmm=$1 oracle=$2 wls=$3
csv=$(mktemp)
trap 'rm -f "$csv"' EXIT
"$vmm" bench suite --parts step --workloads "$wls" --oracle "$oracle" \
	--csv "$csv" || { echo "FAIL: bench suite exited $?"; exit 1; }
cat "$csv"
awk -F, -v want="$(tr , '\n' <<<"$wls" | wc -l)" '
NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
{
	rows++
	w = $col["step_work_diff"]
	g = $col["step_guest_tiny"]; o = $col["step_oracle_tiny"]
	m = $col["step_guest_micro"]
	if (w != "0") { print "FAIL: " $1 ": work difference " w; bad++ }
	if (!(g > 10000 && o > 10000 && g > m)) { print "FAIL: " $1 ": no counts"; bad++ }
}
END { if (rows != want) { print "FAIL: " rows " rows, want " want; bad++ }; exit bad > 0 }
' "$csv" || exit 1
echo ok
