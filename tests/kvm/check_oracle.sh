#!/usr/bin/env bash
# The step source against the ptrace oracle on a libc program: the counts
# of two sizes must differ by exactly the same amount in the guest and
# under stepcount (start-up differences, argv and auxv, cancel).  With
# --bmiss first among the options, the modeled predictor's misses too.
#
#   check_oracle.sh VMM STEPCOUNT PROGRAM N1 N2 [--bmiss] [vmm stat options...]
set -uo pipefail
vmm=$1 oracle=$2 prog=$3 n1=$4 n2=$5
shift 5
name=$(basename "$prog")
events=instructions:u,branches:u oflags=--branches
if [ "${1:-}" = --bmiss ]; then
	events=$events,branch-misses:u oflags="$oflags --bmiss"
	shift
fi

guest() {
	"$vmm" stat --source step -x, -e "$events" "$@" \
		-- "$prog" "$n" 2>&1 >/dev/null |
		awk -F, '/,instructions:u/ {i=$1} /,branches:u/ {b=$1}
			 /,branch-misses:u/ {m=$1} END {print i, b, m + 0}'
}
# Natively without address randomization: libc's string functions take
# a path by the alignment of what they read (argv and the environment at
# start-up), so a random stack gave the oracle a few instructions more or
# less from run to run.  Give N1 and N2 the same number of digits too.
native() {
	# shellcheck disable=SC2086
	setarch "$(uname -m)" -R \
		"$oracle" $oflags --argv0 "$name" -- "$prog" "$n" 2>&1 >/dev/null |
		awk '/^instructions:u/ {i=$2} /^branches:u/ {b=$2}
		     /^branch-misses:u/ {m=$2} END {print i, b, m + 0}'
}
n=$n1; read -r gi1 gb1 gm1 < <(guest "$@"); read -r oi1 ob1 om1 < <(native)
n=$n2; read -r gi2 gb2 gm2 < <(guest "$@"); read -r oi2 ob2 om2 < <(native)
echo "guest:  N=$n1 $gi1 insns $gb1 branches $gm1 misses; N=$n2 $gi2 insns $gb2 branches $gm2 misses"
echo "oracle: N=$n1 $oi1 insns $ob1 branches $om1 misses; N=$n2 $oi2 insns $ob2 branches $om2 misses"
for v in "$gi1" "$gi2" "$oi1" "$oi2"; do
	[[ $v =~ ^[0-9]+$ ]] || { echo "FAIL: no count"; exit 1; }
done
gd=$((gi2 - gi1)) od=$((oi2 - oi1)) gbd=$((gb2 - gb1)) obd=$((ob2 - ob1))
gmd=$((gm2 - gm1)) omd=$((om2 - om1))
echo "difference: guest $gd insns $gbd branches $gmd misses, oracle $od insns $obd branches $omd misses"
[ "$gd" = "$od" ] && [ "$gbd" = "$obd" ] && [ "$gmd" = "$omd" ] ||
	{ echo "FAIL: differences differ"; exit 1; }
[ "$gd" -gt 0 ] || { echo "FAIL: no work measured"; exit 1; }
case $events in
*branch-misses*) [ "$gmd" -gt 0 ] || { echo "FAIL: no misses measured"; exit 1; } ;;
esac
echo ok
