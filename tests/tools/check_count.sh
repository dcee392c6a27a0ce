#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Run stepcount and check its counts exactly.
#
#   check_count.sh STEPCOUNT EXIT_STATUS 'KEY=N;KEY=N...' [STEPCOUNT-ARGS...] -- PROG [ARGS...]
#
# KEY is a count name as stepcount prints it, with spaces as '/':
# instructions:u, branches:u, thread-1/instructions:u.  N='*' only checks
# that the count is there (for programs whose counts vary between runs).
set -u
stepcount=$1 want_status=$2 want=$3
shift 3
out=$(mktemp) || exit 1
trap 'rm -f "$out"' EXIT

"$stepcount" -o "$out" "$@" >/dev/null
status=$?
fail=0
if [ "$status" -ne "$want_status" ]; then
	echo "exit status $status, expected $want_status" >&2
	fail=1
fi
IFS=';'
for kv in $want; do
	key=$(echo "${kv%%=*}" | tr / ' ')
	val=${kv#*=}
	got=$(grep "^$key " "$out" | awk '{ print $NF }')
	if [ "$val" = '*' ] && [ -n "$got" ]; then
		continue
	fi
	if [ "$got" != "$val" ]; then
		echo "$key: got '$got', expected $val" >&2
		fail=1
	fi
done
if [ $fail -ne 0 ]; then
	echo "stepcount output:" >&2
	cat "$out" >&2
fi
exit $fail
