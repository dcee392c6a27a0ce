#!/usr/bin/env bash
# vmm stat and PAPI agree on the same program (tests/papi/papi_stat.c),
# both under the step source: `vmm stat -e instructions:u,branches:u`
# counts the whole program from outside, PAPI_TOT_INS and PAPI_BR_INS in
# the guest count its loop between PAPI_start and PAPI_stop.  At two loop
# lengths N1 < N2:
#   - each tool's counts grow by exactly 2 (N2 - N1) instructions and
#     N2 - N1 branches: both see the same work, exactly;
#   - so vmm stat's count less PAPI's is one constant, the program outside
#     PAPI's region (start-up, PAPI_library_init, the event set, the
#     printf, exit), the same at both lengths; it is printed, with PAPI's
#     own start/stop cost inside its region (its count less the loop's
#     2N and N: PAPI_start's return and PAPI_stop's path up to its read).
# N1 and N2 are chosen so that the counts printed have as many digits at
# both (printf's cost grows with them).
#
# PAPI_library_init reads its preset table (papi_events.csv, 11 million
# instructions of parsing and libpfm4 look-ups, minutes stepped): the
# program gets the installed table cut to its CPU lines and the two
# presets it uses (PAPI_CSV_EVENT_FILE), the same definitions, 0.5
# million.
#
#   check_stat_vs_papi.sh VMM PROG N1 N2
set -uo pipefail
vmm=$1 prog=$2 n1=$3 n2=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
csv=$(ls /usr/share/papi/*/papi_events.csv 2>/dev/null | tail -1)
if [ -z "$csv" ]; then
	echo "FAIL: no papi_events.csv under /usr/share/papi (libpapi-dev)"
	exit 1
fi
grep -E '^(CPU,|PRESET,PAPI_(TOT|BR)_INS,)' "$csv" >"$tmp/presets.csv"

run() {	# N -> "stat_insns stat_branches papi_insns papi_branches"
	timeout -k 5 300 "$vmm" stat --source step -x, \
		-e instructions:u,branches:u -o "$tmp/stat" --timeout 280 \
		--file "$tmp/presets.csv:/presets.csv" \
		--env PAPI_CSV_EVENT_FILE=/presets.csv -- "$prog" "$1" >"$tmp/out" 2>"$tmp/err" </dev/null || {
		local st=$?
		echo "FAIL: $(basename "$prog") $1 exited $st:" >&2
		tail -n 5 "$tmp/out" "$tmp/err" >&2
		return 1
	}
	awk -F, '/instructions:u/ {i=$1} /branches:u/ {b=$1}
		END {printf "%s %s ", i, b}' "$tmp/stat"
	awk '/^papi_stat: [0-9]+ instructions/ {print $2, $4}' "$tmp/out"
}
read -r si1 sb1 pi1 pb1 < <(run "$n1") || exit 1
read -r si2 sb2 pi2 pb2 < <(run "$n2") || exit 1
for v in "$si1" "$sb1" "$pi1" "$pb1" "$si2" "$sb2" "$pi2" "$pb2"; do
	[[ $v =~ ^[0-9]+$ ]] || { echo "FAIL: a count is missing"; exit 1; }
done
echo "N=$n1: vmm stat $si1 instructions $sb1 branches; PAPI $pi1 instructions $pb1 branches"
echo "N=$n2: vmm stat $si2 instructions $sb2 branches; PAPI $pi2 instructions $pb2 branches"
wi=$((2 * (n2 - n1))) wb=$((n2 - n1))
echo "growth: vmm stat $((si2 - si1)) and $((sb2 - sb1)), PAPI" \
	"$((pi2 - pi1)) and $((pb2 - pb1)); the loop's: $wi and $wb"
echo "vmm stat - PAPI (the program outside PAPI's region):" \
	"$((si1 - pi1)) instructions $((sb1 - pb1)) branches at N=$n1," \
	"$((si2 - pi2)) and $((sb2 - pb2)) at N=$n2"
echo "PAPI's own start/stop cost inside its region:" \
	"$((pi1 - 2 * n1)) instructions $((pb1 - n1)) branches"
fail=0
[ $((si2 - si1)) = "$wi" ] && [ $((sb2 - sb1)) = "$wb" ] ||
	{ echo "FAIL: vmm stat's counts grow by other than the loop"; fail=1; }
[ $((pi2 - pi1)) = "$wi" ] && [ $((pb2 - pb1)) = "$wb" ] ||
	{ echo "FAIL: PAPI's counts grow by other than the loop"; fail=1; }
[ $((si1 - pi1)) = $((si2 - pi2)) ] && [ $((sb1 - pb1)) = $((sb2 - pb2)) ] ||
	{ echo "FAIL: vmm stat less PAPI differs between the lengths"; fail=1; }
[ "$pi1" -ge $((2 * n1)) ] && [ "$pb1" -ge "$n1" ] && [ "$si1" -gt "$pi1" ] ||
	{ echo "FAIL: PAPI counts less than its loop, or vmm stat less than PAPI"; fail=1; }
[ "$fail" = 0 ] && echo ok
exit "$fail"
