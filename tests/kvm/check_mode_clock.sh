#!/usr/bin/env bash
# cycles:u and cycles:k apart (the mode clock, docs/design.md 4.6): for a
# program that lives in system calls (kbench's getppid loop) and one that
# never leaves user mode (hot), under SOURCE, the two modes add up to
# cycles of both, and each mode gets the program's share of them.
#
#   check_mode_clock.sh VMM KBENCH HOT SOURCE
set -uo pipefail
vmm=$1 kbench=$2 hot=$3 src=$4
status=0
# u k all for one run: the three counts of one `vmm stat`.
counts() {
	"$vmm" stat --timeout 200 --source "$src" -e cycles:u,cycles:k,cycles \
		-x, -- "$@" 2>&1 >/dev/null |
		awk -F, '$3 == "cycles:u" {u = $1} $3 == "cycles:k" {k = $1}
			 $3 == "cycles" {a = $1} END {print u + 0, k + 0, a + 0}'
}
check() {
	if ! awk "BEGIN {exit !($2)}"; then
		echo "FAIL: $1 ($2)"
		status=1
	else
		echo "ok: $1"
	fi
}
read -r u0 k0 a0 < <(counts "$kbench" loop getppid 0)
read -r u1 k1 a1 < <(counts "$kbench" loop getppid 2000)
read -r uh kh ah < <(counts "$hot" 30000000)
echo "getppid x0:    u=$u0 k=$k0 all=$a0"
echo "getppid x2000: u=$u1 k=$k1 all=$a1"
echo "hot:           u=$uh k=$kh all=$ah"
check "0 calls: all counted" "$a0 > 0"
for r in "2000 $u1 $k1 $a1" "hot $uh $kh $ah"; do
	read -r name u k a <<<"$r"
	check "$name: all counted" "$a > 0"
	# The same interval, split: the sum is the whole within the error
	# of host steal attributed at exits (docs/design.md 4.6); a run of
	# a few ms (0 calls) is all start-up and exit, and that error.
	check "$name: u + k = all within 10%" \
		"$a > 0 && ($u + $k) / $a > 0.9 && ($u + $k) / $a < 1.1"
done
# 2000 system calls: their part of the run is in kernel mode, within the
# run (under QEMU's SVM start-up alone varies by more than 2000 native
# calls take).  Seen: 31-36% on kvm_pvm, 19-56% under QEMU's SVM, and
# 0.05% when the calls were counted as user time.
check "2000 getppid: kernel mode has 5% or more" "$k1 > 0.05 * $a1"
check "hot: user mode has nearly all" "$uh > 0.9 * $ah"
check "hot: kernel mode has little" "$kh < 0.1 * $ah"
exit $status
