#!/usr/bin/env bash
# VM exits per guest thread switch, from `vmm stat -v`'s line
# "N thread switches, M switch hypercalls (...), G counted by the guest":
# more than 300 switches, and the exits the policy's switch rule allows,
# read from `vmm --list-policies` (no list of policy names here):
# exit-active, one batched hypercall per switch; period=P, one per P
# switches the guest counted; otherwise none.  Besides those, at most 2
# (the first configuration load).  No line at all is a failure.
#
#   switch_exits.sh VMM YIELD POLICY
set -uo pipefail
vmm=$1 prog=$2 policy=$3
words=$("$vmm" --list-policies | awk -F'\t' -v p="$policy" '$1 == p {print $3}')
[ -n "$words" ] || { echo "switch_exits.sh: $vmm has no policy $policy"; exit 2; }
period=0
case " $words " in
*" exit-active "*) rule='$6 == $3' ;;
*" period="*)
	period=${words##*period=}
	period=${period%% *}
	rule="\$6 >= int(\$12 / $period) && \$6 <= int(\$12 / $period) + 2" ;;
*) rule='$6 <= 2' ;;
esac
echo "policy $policy: $words"
"$vmm" stat -v --policy "$policy" -e cycles -x, -- "$prog" 200 2>&1 >/dev/null |
	grep "thread switches" | tee /dev/stderr |
	awk "{n++; if (!(\$3 > 300 && ($rule))) bad++} END {exit !(n == 1 && !bad)}"
