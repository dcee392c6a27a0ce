#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Count two builds of one program and check the difference of the counts
# exactly: start-up costs (argv, auxv, libc init) cancel, the loop remains.
#
#   check_diff.sh STEPCOUNT PROG_SMALL PROG_LARGE DIFF_INSNS DIFF_BRANCHES
set -u
stepcount=$1 small=$2 large=$3 want_i=$4 want_b=$5
a=$(mktemp) && b=$(mktemp) || exit 1
trap 'rm -f "$a" "$b"' EXIT

# The programs exit with a known non-zero status; only the counts matter.
"$stepcount" --branches -o "$a" -- "$small" >/dev/null
"$stepcount" --branches -o "$b" -- "$large" >/dev/null
count() { grep "^$1 " "$2" | awk '{ print $2 }'; }
di=$(( $(count instructions:u "$b") - $(count instructions:u "$a") ))
db=$(( $(count branches:u "$b") - $(count branches:u "$a") ))
if [ "$di" -ne "$want_i" ] || [ "$db" -ne "$want_b" ]; then
	echo "difference: instructions $di (expected $want_i)," \
		"branches $db (expected $want_b)" >&2
	cat "$a" "$b" >&2
	exit 1
fi
exit 0
