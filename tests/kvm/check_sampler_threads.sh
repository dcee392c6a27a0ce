#!/usr/bin/env bash
# The VMM's sampler names the guest thread each sample ran in: `hot N
# threads` runs hot() in its main thread (comm hot) and cold() in a second
# one (comm coldthr).  Each thread's own function must have a real share
# (at least 20%), and neither thread the other's function (under 1%: a
# sample credited to the wrong thread lands there).
#
#   check_sampler_threads.sh VMM CPUS HOT N
set -uo pipefail
vmm=$1 cpus=$2 prog=$3 n=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$vmm" record --sampler vmm --cpus "$cpus" -o "$tmp/p.data" -- "$prog" "$n" threads \
	>/dev/null 2>"$tmp/err" || { cat "$tmp/err"; echo "FAIL: record"; exit 1; }
cat "$tmp/err"
samples=$(sed -n 's/.*record: \([0-9]*\) samples.*/\1/p' "$tmp/err")
[ "${samples:-0}" -ge 200 ] || { echo "FAIL: fewer than 200 samples"; exit 1; }
"$vmm" report -i "$tmp/p.data" --sort comm,sym >"$tmp/report" || { echo "FAIL: report"; exit 1; }
grep -v '^#' "$tmp/report" | head -8
share() {
	awk -v c="$1" -v s="$2" '!/^#/ && $2 == c && $NF == s {gsub("%", "", $1); print $1; f = 1}
		END {if (!f) print 0}' "$tmp/report"
}
at_least() { awk -v a="$1" -v b="$2" 'BEGIN {exit !(a >= b)}'; }
for own in "hot hot" "coldthr cold"; do
	set -- $own
	v=$(share "$1" "$2")
	at_least "$v" 20 || { echo "FAIL: $1 has $v% in $2, expected at least 20%"; exit 1; }
done
for cross in "hot cold" "coldthr hot"; do
	set -- $cross
	v=$(share "$1" "$2")
	at_least 1 "$v" || { echo "FAIL: $1 has $v% in $2: samples credited to the wrong thread"; exit 1; }
done
echo ok
