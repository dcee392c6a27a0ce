#!/usr/bin/env bash
# The tsc source excludes host preemption: a CPU-bound program's cycles on
# an oversubscribed host (2 x CPUs - 1 host spinners: three on a 2-core
# machine, where the vCPU gets about half a core; one in QEMU's one-CPU
# machine, where three made each round of five take a minute and a half)
# stay near its cycles on the idle host,
# while KVM reports steal time; counted with the preemption they would
# double, as the raw policy's count shows.
#
# These machines are themselves virtual and shared: one run alone varies
# by 30% from second to second.  So the test takes five rounds, each an
# idle run immediately followed by an oversubscribed and a raw run, and
# bounds the median of the per-round ratios.  The bound is 1.5x, not the
# 2% goal: co-running spinners slow the guest's own execution too (shared
# cores and caches).  meson runs this test alone (is_parallel: false).
#
#   check_steal.sh VMM PROGRAM ARGS...
set -uo pipefail
vmm=$1
shift

# One run: "cycles steal".
measure() {
	"$vmm" stat -x, -e cycles,steal "$@" 2>&1 >/dev/null |
		awk -F, '$3 == "cycles" {c=$1} $3 == "steal" {s=$1} END {print c, s}'
}

median() {
	sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'
}

rounds=5
spinners=$((2 * $(nproc) - 1))
ratios=() raws=() steals=()
for r in $(seq $rounds); do
	read -r idle _ < <(measure -- "$@")
	pids=()
	for i in $(seq $spinners); do
		timeout 60 sh -c 'while :; do :; done' &
		pids+=($!)
	done
	sleep 0.2
	read -r busy steal < <(measure -- "$@")
	read -r raw _ < <(measure --policy raw -- "$@")
	kill "${pids[@]}" 2>/dev/null
	wait 2>/dev/null
	echo "round $r: cycles idle $idle, oversubscribed $busy (steal ${steal}ns), raw policy oversubscribed $raw"
	[[ $idle =~ ^[0-9]+$ && $busy =~ ^[0-9]+$ && $raw =~ ^[0-9]+$ ]] ||
		{ echo "FAIL: no counts"; exit 1; }
	ratios+=("$(awk -v a="$idle" -v b="$busy" 'BEGIN {print b / a}')")
	raws+=("$(awk -v a="$busy" -v b="$raw" 'BEGIN {print b / a}')")
	steals+=("${steal:-0}")
done
ratio=$(printf '%s\n' "${ratios[@]}" | median)
rawratio=$(printf '%s\n' "${raws[@]}" | median)
steal=$(printf '%s\n' "${steals[@]}" | median)
echo "median oversubscribed/idle $ratio, raw/oversubscribed $rawratio, steal ${steal}ns"
[ "$steal" -gt 0 ] || { echo "FAIL: no steal time while oversubscribed"; exit 1; }
awk -v r="$ratio" 'BEGIN {exit !(r > 0.5 && r < 1.5)}' ||
	{ echo "FAIL: oversubscribed cycles are not near the idle ones (host preemption counted?)"; exit 1; }
# raw does not virtualize: the preempted time is in its count.
awk -v r="$rawratio" 'BEGIN {exit !(r > 1.3)}' ||
	{ echo "FAIL: raw should count the host preemption"; exit 1; }
echo ok
