#!/usr/bin/env bash
# The guest kernel sees exactly the system calls a program makes natively:
# `vmm stat --breakdown`'s count of each call against the syscount oracle
# (ptrace at each entry on the host), for a deterministic program, and the
# same output.  Run on every host kind (the svm suite too), this shows the
# kernel-entry counts of a standard KVM and of kvm_pvm are Linux's.
#
#   kentry_oracle.sh VMM SYSCOUNT PROG ARGS...
set -uo pipefail
vmm=$1 oracle=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$vmm" stat --breakdown -x, -o "$tmp/guest" -- "$@" >"$tmp/guest-out" \
	</dev/null || { echo "FAIL: vmm stat exited $?"; exit 1; }
"$oracle" --argv0 "$(basename "$1")" -- "$@" >"$tmp/native-out" \
	2>"$tmp/native" </dev/null ||
	{ echo "FAIL: the native run exited $?"; cat "$tmp/native"; exit 1; }
grep ',kentry:syscall:' "$tmp/guest" | sort >"$tmp/g"
grep ',kentry:syscall:' "$tmp/native" | sort >"$tmp/n"
fail=0
if [ ! -s "$tmp/n" ]; then
	echo "FAIL: the oracle saw no system call"
	fail=1
fi
if ! cmp -s "$tmp/g" "$tmp/n"; then
	echo "FAIL: system calls differ (< guest, > native):"
	diff "$tmp/g" "$tmp/n"
	fail=1
fi
if ! cmp -s "$tmp/guest-out" "$tmp/native-out"; then
	echo "FAIL: output differs from the native run"
	fail=1
fi
[ $fail = 0 ] && echo "ok: $(wc -l <"$tmp/n") system calls, $(awk -F, '{s += $1} END {print s}' "$tmp/n") entries, as natively"
exit $fail
