#!/usr/bin/env bash
# What one trap of the step source costs on this host, by blocks and by
# single steps, so the choice between them (docs/design.md section 4.4)
# can be checked again on another host: a loop program counted both ways
# at two sizes; the difference of the two sizes leaves boot and start-up
# out.  Prints µs per trap and per user instruction, and instructions per
# block trap.  Run from the top of the tree after a build.
#
#   scripts/step-trap-cost.sh [BUILD_DIR] [N1 N2]
set -euo pipefail
dir=${1:-build} n1=${2:-200} n2=${3:-2000}
vmm=$dir/vmm/vmm prog=$dir/tests/guest/loopn

# mode N -> "seconds instructions traps"
run() {
	local t0 t1 out
	t0=$(date +%s.%N)
	out=$("$vmm" stat -v --source step --step-mode "$1" -x, \
		-e instructions:u -- "$prog" "$2" 2>&1 >/dev/null)
	t1=$(date +%s.%N)
	echo "$(echo "$t1 - $t0" | bc -l)" \
	     "$(echo "$out" | awk -F, '/,instructions:u,/ {print $1}')" \
	     "$(echo "$out" | sed -n 's/^vmm: step blocks: \([0-9]*\) traps.*/\1/p')"
}

echo "host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
for mode in block single; do
	read -r ta ia xa < <(run "$mode" "$n1")
	read -r tb ib xb < <(run "$mode" "$n2")
	insns=$((ib - ia))
	# Single-stepping traps once per instruction.
	traps=$insns
	[ "$mode" = block ] && traps=$((xb - xa))
	awk -v m="$mode" -v t="$(echo "$tb - $ta" | bc -l)" -v i="$insns" \
	    -v x="$traps" 'BEGIN {
		printf "%-6s %d instructions, %d traps: %.1f us per trap, " \
		       "%.2f us per instruction, %.1f instructions per trap\n",
		       m, i, x, t * 1e6 / x, t * 1e6 / i, i / x }'
done
