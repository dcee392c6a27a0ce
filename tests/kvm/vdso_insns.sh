#!/usr/bin/env bash
# clock_gettime without a kernel entry: PROG (tests/guest/vdso.c, musl or
# glibc) calls clock_gettime(CLOCK_MONOTONIC) N times under `vmm stat
# --source step -e instructions:k` (the VMM single-steps CPL0); the
# difference between two N over their difference is the kernel
# instructions per call, which must stay under MAX (0 when the vDSO
# serves it).  The same for syscall(SYS_clock_gettime) is printed beside
# it: what every call cost before the vDSO.
#
#   vdso_insns.sh VMM PROG [MAX]
set -uo pipefail
vmm=$1 prog=$2 max=${3:-5}
A=10 B=1010 R=32
kcount() {
	local out

	# The count only if the program ran and exited 0.
	out=$("$vmm" stat --timeout 200 --source step -e instructions:k -x, \
		-- "$prog" "$1" "$2" 2>&1 >/dev/null) || return
	awk -F, '$3 == "instructions:k" {print $1}' <<<"$out"
}
a=$(kcount loop $A) b=$(kcount loop $B)
ra=$(kcount rawloop 0) rb=$(kcount rawloop $R)
if [ -z "$a" ] || [ -z "$b" ] || [ -z "$ra" ] || [ -z "$rb" ]; then
	echo "FAIL: no instructions:k count ('$a', '$b', '$ra', '$rb')"
	exit 1
fi
per=$(( (b - a) / (B - A) ))
raw=$(( (rb - ra) / R ))
echo "$(basename "$prog"): $per kernel instructions per clock_gettime" \
	"(loops of $A and $B: $a, $b); system call: $raw (0 and $R: $ra, $rb)"
if [ "$per" -ge "$max" ] || [ "$b" -lt "$a" ]; then
	echo "FAIL: clock_gettime enters the kernel: $per instructions per call"
	exit 1
fi
if [ "$raw" -le 0 ]; then
	echo "FAIL: the raw system call shows no kernel instructions ($raw)"
	exit 1
fi
