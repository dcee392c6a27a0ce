#!/usr/bin/env bash
# The step source against the ptrace oracle on a libc program: the counts
# of two sizes must differ by exactly the same amount in the guest and
# under stepcount (start-up differences, argv and auxv, cancel).
#
#   check_oracle.sh VMM STEPCOUNT PROGRAM N1 N2 [vmm stat options...]
set -uo pipefail
vmm=$1 oracle=$2 prog=$3 n1=$4 n2=$5
shift 5
name=$(basename "$prog")

guest() {
	"$vmm" stat --source step -x, -e instructions:u,branches:u "$@" \
		-- "$prog" "$n" 2>&1 >/dev/null |
		awk -F, '/instructions:u/ {i=$1} /branches:u/ {b=$1} END {print i, b}'
}
# Natively without address randomization: libc's string functions take
# a path by the alignment of what they read (argv and the environment at
# start-up), so a random stack gave the oracle a few instructions more or
# less from run to run.  Give N1 and N2 the same number of digits too.
native() {
	setarch "$(uname -m)" -R \
		"$oracle" --branches --argv0 "$name" -- "$prog" "$n" 2>&1 >/dev/null |
		awk '/^instructions:u/ {i=$2} /^branches:u/ {b=$2} END {print i, b}'
}
n=$n1; read -r gi1 gb1 < <(guest "$@"); read -r oi1 ob1 < <(native)
n=$n2; read -r gi2 gb2 < <(guest "$@"); read -r oi2 ob2 < <(native)
echo "guest:  N=$n1 $gi1 insns $gb1 branches; N=$n2 $gi2 insns $gb2 branches"
echo "oracle: N=$n1 $oi1 insns $ob1 branches; N=$n2 $oi2 insns $ob2 branches"
for v in "$gi1" "$gi2" "$oi1" "$oi2"; do
	[[ $v =~ ^[0-9]+$ ]] || { echo "FAIL: no count"; exit 1; }
done
gd=$((gi2 - gi1)) od=$((oi2 - oi1)) gbd=$((gb2 - gb1)) obd=$((ob2 - ob1))
echo "difference: guest $gd insns $gbd branches, oracle $od insns $obd branches"
[ "$gd" = "$od" ] && [ "$gbd" = "$obd" ] || { echo "FAIL: differences differ"; exit 1; }
[ "$gd" -gt 0 ] || { echo "FAIL: no work measured"; exit 1; }
echo ok
