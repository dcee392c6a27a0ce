#!/usr/bin/env bash
# Pending delivery (Perfctr-Xen's "mark pending, deliver on next resume"):
# the owner counts user and kernel instructions with a period while it
# yields to another thread on one vCPU, so overflows land in the switch
# path with interrupts off and must cross the switch.  Every signal arrives
# in the owner, and the VMM reports that overflows were carried across a
# switch and raised again on resume.  The step source makes where the
# overflows land exact and fixed by the kernel's code: 200 rounds spread
# them over the whole round (40 left none in the switch path on a
# standard KVM once that path got shorter; 200 carry 8 there, 82 on
# kvm_pvm).
#
#   vpmu_pending.sh VMM VPMU_TEST
set -uo pipefail
vmm=$1 prog=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Single steps: the overflows must spread over every path as one trap per
# instruction spreads them; counted by blocks, a standard KVM's shorter
# kernel paths left none in the switch.  Where each overflow lands is
# fixed by the kernel's code, so one period can miss the switch's few
# instructions with interrupts off in every round (9973 did, built with
# clang, once the system-call path gained two instructions): two periods,
# each run's carried overflows all raised again, and some carried in all.
carried=0
for period in 9973 6007; do
	"$vmm" run -v --timeout 250 --source step --step-mode single -- \
		"$prog" pending $period 200 >"$tmp/out" 2>"$tmp/err"
	r=$?
	cat "$tmp/out" "$tmp/err" | grep -E "pending:|carried" >&2
	[ $r = 0 ] && grep -q "^pending: ok" "$tmp/out" || exit 1
	c=$(awk '/overflows carried/ {c = $4; d = $11}
		 END {if (c != d) exit 1; print c + 0}' "$tmp/err") || exit 1
	carried=$((carried + c))
done
[ "$carried" -gt 0 ] || { echo "no overflow carried across a switch" >&2; exit 1; }
