#!/usr/bin/env bash
# Stores through writable MAP_SHARED file mappings reach the host file
# (guest-kernel/mm_shared.c): tests/guest/mapshared.c natively and in the
# guest on a :rw share, and every file it leaves the same byte for byte,
# including the one it stored to before its SIGKILL.
#
#   mapshared.sh VMM MAPSHARED [VMM OPTIONS...]
set -uo pipefail
vmm=$1 prog=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/native" "$tmp/guest"
fail=0
out=$("$prog" "$tmp/native")
[ "$out" = "mapshared: ok" ] || { echo "native: $out"; fail=1; }
"$prog" "$tmp/native" kill
out=$(timeout -k 5 200 "$vmm" run "$@" --dir "$tmp/guest:/out:rw" -- \
	"$prog" /out 2>&1)
[ "$out" = "mapshared: ok" ] || { echo "FAIL: guest: $out"; fail=1; }
timeout -k 5 200 "$vmm" run "$@" --dir "$tmp/guest:/out:rw" -- \
	"$prog" /out kill
st=$?
[ $st = 137 ] || { echo "FAIL: guest kill: exit $st, want 137"; fail=1; }
for f in exit munmap msync big fork private kill; do
	if ! cmp "$tmp/native/$f" "$tmp/guest/$f"; then
		echo "FAIL: $f differs from the native run's"
		fail=1
	fi
done
[ $fail = 0 ] && echo "mapshared: the guest's files are the native run's"
exit $fail
