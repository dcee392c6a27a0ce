#!/usr/bin/env bash
# VM exits per guest thread switch, from `vmm stat -v`'s line
# "thread switches N exits M ...": more than 300 switches, and the exits
# the policy allows (offset, raw and wallclock: at most 2, the first load;
# saverestore: one batched hypercall per switch).  No line at all is a failure.
#
#   switch_exits.sh VMM YIELD POLICY
set -uo pipefail
vmm=$1 prog=$2 policy=$3
case $policy in
offset | raw | wallclock) rule='$6 <= 2' ;;
saverestore) rule='$6 == $3' ;;
*) echo "switch_exits.sh: unknown policy $policy"; exit 2 ;;
esac
"$vmm" stat -v --policy "$policy" -e cycles -x, -- "$prog" 200 2>&1 >/dev/null |
	grep "thread switches" | tee /dev/stderr |
	awk "{n++; if (!(\$3 > 300 && ($rule))) bad++} END {exit !(n == 1 && !bad)}"
