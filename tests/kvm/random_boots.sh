#!/usr/bin/env bash
# The guest's random bytes come from the host's getrandom(2): two boots of
# tests/guest/random give different bytes from getrandom, /dev/urandom and
# AT_RANDOM, and each passes its own checks.
#
#   random_boots.sh VMM PROGRAM [vmm run options...]
set -uo pipefail
vmm=$1 prog=$2
shift 2
a=$("$vmm" run "$@" -- "$prog") || { echo "FAIL: first boot: $a"; exit 1; }
b=$("$vmm" run "$@" -- "$prog") || { echo "FAIL: second boot: $b"; exit 1; }
echo "$a"
echo "$b"
for x in "$a" "$b"; do
	[[ $x == "random: ok getrandom "* ]] || { echo "FAIL: $x"; exit 1; }
done
read -r _ _ _ ga _ ua _ ra <<<"$a"
read -r _ _ _ gb _ ub _ rb <<<"$b"
[ "$ga" != "$gb" ] && [ "$ua" != "$ub" ] && [ "$ra" != "$rb" ] ||
	{ echo "FAIL: the two boots share bytes"; exit 1; }
echo ok
