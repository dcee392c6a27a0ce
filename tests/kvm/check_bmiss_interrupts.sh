#!/usr/bin/env bash
# The modeled predictor's misses do not depend on where kernel entries
# land: branchy with a SIGALRM every US microseconds (whose handler has
# no conditional branch) counts the misses of the same run whose timer
# never fires, while some of those entries land inside the code cache's
# predictor stubs (vmm -v: "N in predictor stubs") and the VMM finishes
# the stub's update itself.
#
#   check_bmiss_interrupts.sh VMM BRANCHY ROUNDS US
set -uo pipefail
vmm=$1 prog=$2 rounds=$3 us=$4

run() {
	"$vmm" stat -v --source step -x, -e branch-misses:u -- \
		"$prog" "$rounds" "$1" 2>&1 >/dev/null |
		awk -F, '/,branch-misses:u/ {m=$1}
			 /in predictor stubs/ {
				 sub(/.*\(/, ""); sub(/ in predictor.*/, ""); l=$0 }
			 END {print m, l}'
}
read -r m0 l0 < <(run 100000000)
echo "timer that never fires: $m0 misses ($l0 entries in stubs)"
[[ $m0 =~ ^[0-9]+$ ]] && [ "$m0" -gt 0 ] || { echo "FAIL: no count"; exit 1; }
leaves=0
for try in 1 2 3 4; do
	read -r m l < <(run "$us")
	echo "SIGALRM every ${us} us, run $try: $m misses ($l entries in stubs)"
	[ "$m" = "$m0" ] || { echo "FAIL: the misses moved"; exit 1; }
	leaves=$((leaves + l))
	[ "$leaves" -gt 0 ] && { echo ok; exit 0; }
done
echo "FAIL: no kernel entry landed in a predictor stub"
exit 1
