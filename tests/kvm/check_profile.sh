#!/usr/bin/env bash
# vmm record + vmm report on a program that spends most of its
# instructions in one function: the report must name that function first,
# with the share callgrind measures on the same binary (within 2 points).
#
#   check_profile.sh VMM PROGRAM ARG FUNCTION
set -uo pipefail
vmm=$1 prog=$(realpath "$2") arg=$3 fn=$4
command -v valgrind >/dev/null || { echo "FAIL: valgrind missing"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$vmm" record --source step -e instructions:u -c 200 -o "$tmp/p.data" \
	-- "$prog" "$arg" >/dev/null || { echo "FAIL: record"; exit 1; }
"$vmm" report -i "$tmp/p.data" --sort sym >"$tmp/report" ||
	{ echo "FAIL: report"; exit 1; }
cat "$tmp/report"
read -r share sym < <(awk '!/^#/ && NF >= 2 {gsub("%", "", $1); print $1, $NF; exit}' "$tmp/report")
(cd "$tmp" && valgrind --tool=callgrind --callgrind-out-file=cg.out \
	"$prog" "$arg" >/dev/null 2>&1) || { echo "FAIL: callgrind"; exit 1; }
cg=$(callgrind_annotate --threshold=100 "$tmp/cg.out" 2>/dev/null |
	awk -v fn=":$fn " 'index($0, fn) {gsub("[(%)]", "", $2); print $2; exit}')
echo "report: $sym $share%   callgrind: $fn $cg%"
[ "$sym" = "$fn" ] || { echo "FAIL: first symbol is $sym, not $fn"; exit 1; }
awk -v a="$share" -v b="$cg" 'BEGIN {d = a - b; if (d < 0) d = -d; exit !(d <= 2)}' ||
	{ echo "FAIL: share $share% differs from callgrind's $cg% by more than 2"; exit 1; }
echo ok
