#!/usr/bin/env bash
# Counting by blocks puts int3s into shared libraries' text too, in the
# pinned image the guest kernel maps in place (vfs_pin()); a read of the
# library's file through the share must still give the file's own bytes.
# A dynamically linked program runs first, then busybox hashes its libc.
#
#   check_lib_clean.sh VMM BUSYBOX DYNPROG
set -uo pipefail
vmm=$1 bb=$2 prog=$(readlink -f "$3")
lib=$(ldd "$prog" | awk '/libc\.so/ {print $3}')
lib=$(readlink -f "$lib")
[ -f "$lib" ] || { echo "FAIL: no libc for $prog"; exit 1; }
want=$(sha256sum "$lib" | cut -d' ' -f1)
# The program goes in as a file: the guest's /tmp is its own, so a build
# tree under the host's /tmp is not in the share.
out=$("$vmm" stat -v --source step -e instructions:u -o /dev/null \
	--dir /:/:ro --file "$prog:/tmp/dynwork" -- "$bb" sh -c \
	"/tmp/dynwork 20 && $bb sha256sum $lib" 2>&1)
echo "$out"
got=$(echo "$out" | awk -v f="$lib" '$2 == f {print $1}')
echo "host sha256 $want, guest $got"
[ "$got" = "$want" ] || { echo "FAIL: the guest read other bytes"; exit 1; }
echo "$out" | grep -q 'int3s in [1-9]' || { echo "FAIL: no int3s placed"; exit 1; }
