#!/usr/bin/env bash
# `vmm record -g`: the chain program's main -> outer -> inner, built with
# frame pointers, must show in `vmm report --folded` as the stack
# main;outer;inner (root first, after the comm and dso frames) holding
# most of the samples, read back from perfvisor.data and from perf.data
# alike.  A guest spinning with a garbage rbp must just get short chains,
# the guest sampler none, and an unwinder we lack a one-line error.
#
#   check_record_callchain.sh VMM CHAIN N
set -uo pipefail
vmm=$1 prog=$2 n=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

record() {
	"$vmm" record "$@" >/dev/null 2>"$tmp/err" ||
		{ cat "$tmp/err"; echo "FAIL: record $*"; exit 1; }
	cat "$tmp/err"
}
folded() {
	"$vmm" report -i "$1" --folded >"$tmp/folded" || { echo "FAIL: report -i $1"; exit 1; }
}
# The share of the folded stacks' total that has main;outer;inner.
stack_share() {
	awk '{ c = $NF; t += c; s = $0; sub(/ [0-9]+$/, "", s)
	       if (s ~ /^chain;chain;(.*;)?main;outer;inner$/) m += c }
	     END { printf "%d\n", t ? 100 * m / t : 0 }' "$tmp/folded"
}

for fmt in perfvisor perf; do
	record -g --format "$fmt" -o "$tmp/c.$fmt" -- "$prog" "$n"
	samples=$(sed -n 's/.*record: \([0-9]*\) samples.*/\1/p' "$tmp/err")
	[ "${samples:-0}" -ge 100 ] || { echo "FAIL: $fmt: fewer than 100 samples"; exit 1; }
	folded "$tmp/c.$fmt"
	sort -t' ' -k2 -n -r "$tmp/folded" | head -4
	share=$(stack_share)
	[ "$share" -ge 80 ] ||
		{ echo "FAIL: $fmt: main;outer;inner holds $share% of the samples, expected 80%"; exit 1; }
	# The table stays self time: inner's own row, no callers in it.
	"$vmm" report -i "$tmp/c.$fmt" --sort sym >"$tmp/report" || { echo "FAIL: report"; exit 1; }
	grep -q '\[\.\] inner$' "$tmp/report" || { echo "FAIL: $fmt: no inner row"; exit 1; }
done

# --call-graph fp is -g; without either the same run has no chains.
record --call-graph fp -o "$tmp/fp.data" -- "$prog" "$n"
folded "$tmp/fp.data"
[ "$(stack_share)" -ge 80 ] || { echo "FAIL: --call-graph fp: no chains"; exit 1; }
record -o "$tmp/plain.data" -- "$prog" "$n"
folded "$tmp/plain.data"
[ "$(stack_share)" -eq 0 ] || { echo "FAIL: chains without -g"; exit 1; }

# rbp unmapped, unaligned, a frame pointing at itself, in the kernel.
record -g -o "$tmp/bad.data" -- "$prog" "$n" bad
folded "$tmp/bad.data"
grep -q 'bad_frames [0-9]*$' "$tmp/folded" || { cat "$tmp/folded"; echo "FAIL: no bad_frames samples"; exit 1; }

# The guest's PMIs carry the IP alone: -g says so and stacks stay flat.
record -g --sampler guest -o "$tmp/guest.data" -- "$prog" "$n"
grep -q 'no call chains' "$tmp/err" || { echo "FAIL: --sampler guest -g: no note"; exit 1; }
folded "$tmp/guest.data"
if awk '{ s = $0; sub(/ [0-9]+$/, "", s); if (gsub(/;/, ";", s) != 2) bad = 1 } END { exit !bad }' \
	"$tmp/folded"; then
	cat "$tmp/folded"; echo "FAIL: --sampler guest: stacks deeper than comm;dso;sym"; exit 1
fi

if "$vmm" record --call-graph dwarf -- "$prog" 1 >/dev/null 2>"$tmp/err"; then
	echo "FAIL: --call-graph dwarf accepted"; exit 1
fi
[ "$(wc -l <"$tmp/err")" -eq 1 ] || { cat "$tmp/err"; echo "FAIL: not a one-line error"; exit 1; }
echo ok
