#!/usr/bin/env bash
# Kernel and user counts together on the real kernel with threads: the VMM
# steps CPL0 while the guest steps user code.  User counts stay exact (213
# and 606, the oracle's), kernel counts are there, and nothing in the
# kernel spins on data KVM rewrites at every stepped entry (the steal
# record once did: a hang; so did a 100 Hz tick that took longer to step
# than it lasted, on QEMU's SVM KVM).
#
#   step_kernel_user.sh VMM CLONETEST
set -uo pipefail
vmm=$1 prog=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$vmm" stat -v --timeout 100 --per-thread --source step \
	-e instructions:u,instructions:k -x, -- "$prog" >"$tmp/out" 2>"$tmp/err"
grep -v "kvm " "$tmp/err" >&2
awk -F, '$4 == "instructions:u" {u = u " " $2}
	 $4 == "instructions:k" && $2 > 1000 {k++}
	 END {exit !(u == " 213 606" && k == 2)}' "$tmp/err"
