#!/usr/bin/env bash
# Counting by blocks puts int3s into the text of the programs that run
# (vmm/core/step_block.c); a read of such a program's file must still give
# the file's own bytes.  blockedge runs first, so its text has them, then
# busybox hashes its file in the same guest.
#
#   check_file_clean.sh VMM BUSYBOX BLOCKEDGE
set -uo pipefail
vmm=$1 bb=$2 prog=$3
want=$(sha256sum "$prog" | cut -d' ' -f1)
out=$("$vmm" stat --source step -e instructions:u -o /dev/null \
	--file "$prog:/bin/blockedge" -- "$bb" sh -c \
	'blockedge 1 && busybox sha256sum /bin/blockedge')
echo "$out"
got=$(echo "$out" | awk '/blockedge$/ {print $1}')
echo "host sha256 $want, guest $got"
[ "$got" = "$want" ] || { echo "FAIL: the guest read other bytes"; exit 1; }
echo "$out" | grep -q '^blockedge: ok$' || { echo "FAIL: blockedge"; exit 1; }
