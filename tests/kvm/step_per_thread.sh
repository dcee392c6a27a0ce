#!/usr/bin/env bash
# Per-thread step counts of clonetest under a policy, against the host
# single-step oracle's: 213 and 606 user instructions, 101 and 301
# branches.  What to expect comes from the policy's switch rule in
# `vmm --list-policies` (no list of policy names here): a rule that folds
# offsets or loads counters with their thread keeps each thread's count
# exactly its own.  One that does neither (raw) leaves the counters
# running across switches: the first thread still counts 213 (no user
# code ran before it), and the second is charged the first one's 213 too
# (819) when it ran on the same vCPU, which on one vCPU it always did.
#
#   step_per_thread.sh CHECK_SH VMM CLONETEST POLICY CPUS VMM_ARGS...
set -uo pipefail
check=$1 vmm=$2 prog=$3 policy=$4 cpus=$5
shift 5
words=$("$vmm" --list-policies | awk -F'\t' -v p="$policy" '$1 == p {print $3}')
[ -n "$words" ] || { echo "step_per_thread.sh: $vmm has no policy $policy"; exit 2; }
echo "policy $policy: $words"
case " $words " in
*" fold "* | *" loaded "*)
	want=(-e '^clonetest-1,213,,instructions:u,' -e '^clonetest-1,101,,branches:u,'
	      -e '^clonetest-2,606,,instructions:u,' -e '^clonetest-2,301,,branches:u,') ;;
*)
	second=819
	[ "$cpus" = 1 ] || second='(606|819)'
	want=(-e '^clonetest-1,213,,instructions:u,'
	      -e "^clonetest-2,$second,,instructions:u,") ;;
esac
exec bash "$check" "${want[@]}" -- "$vmm" "$@" --per-thread \
	--policy "$policy" --cpus "$cpus" -- "$prog"
