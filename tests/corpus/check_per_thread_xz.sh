#!/usr/bin/env bash
# vmm stat -e cycles --per-thread on xz's multithreaded encoder (2 worker
# threads, 2 vCPUs): one line per thread (main xz-1, workers xz-2 and xz-3)
# in perf's -x, format, each with a positive count, and the program's
# output unchanged by counting (the multithreaded stream's hash included).
#
#   check_per_thread_xz.sh VMM XZ
set -uo pipefail
vmm=$1 xz=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

env -i "$xz" 2 >"$tmp/native" || { echo "FAIL: native run"; exit 1; }
"$vmm" stat -e cycles --per-thread -x, --cpus 2 --mem 256M -o "$tmp/stat" \
	-- "$xz" 2 >"$tmp/out" || { echo "FAIL: vmm stat, status $?"; exit 1; }
cat "$tmp/stat"
fail=0
cmp -s "$tmp/native" "$tmp/out" || { echo "FAIL: output differs from native:"; diff "$tmp/native" "$tmp/out"; fail=1; }
for tid in 1 2 3; do
	n=$(grep -c "^xz-$tid,[1-9][0-9]*,,cycles," "$tmp/stat")
	[ "$n" = 1 ] || { echo "FAIL: $n lines for thread xz-$tid, want 1 with a count"; fail=1; }
done
lines=$(grep -c ',cycles,' "$tmp/stat")
[ "$lines" = 3 ] || { echo "FAIL: $lines cycles lines, want 3 (one per thread)"; fail=1; }
[ $fail = 0 ] && echo ok
exit $fail
