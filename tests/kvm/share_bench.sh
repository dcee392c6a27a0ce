#!/usr/bin/env bash
# Reading a big file from a host directory (--dir) in the guest against
# native, side by side: `busybox cat FILE > /dev/null` (sendfile, which
# the guest kernel serves 2 MiB per exit from a host file) in the guest,
# and GNU cat and busybox cat natively, best of R runs of each; the
# guest's boot (`busybox true` with the same share) is printed beside it
# and subtracted for the ratio.
#
#   share_bench.sh VMM [MIB [RUNS]]
set -euo pipefail
vmm=$1 mib=${2:-512} runs=${3:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
head -c "$((mib << 20))" /dev/urandom >"$tmp/big"
cat "$tmp/big" >/dev/null		# in the page cache for every run

best() {	# best wall time in seconds of RUNS runs of "$@"
	local b= t0 t1 t
	for _ in $(seq "$runs"); do
		t0=$(date +%s.%N)
		"$@" >/dev/null
		t1=$(date +%s.%N)
		t=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
		if [ -z "$b" ] || awk -v t="$t" -v b="$b" 'BEGIN { exit !(t < b) }'
		then
			b=$t
		fi
	done
	echo "$b"
}

guest=$(best "$vmm" run --dir "$tmp:/in" -- /bin/busybox cat /in/big)
boot=$(best "$vmm" run --dir "$tmp:/in" -- /bin/busybox true)
gnu=$(best cat "$tmp/big")
bb=$(best /bin/busybox cat "$tmp/big")
awk -v m="$mib" -v g="$guest" -v o="$boot" -v n="$gnu" -v b="$bb" 'BEGIN {
	printf "share-read %d MiB: guest %.3f s (boot %.3f s, read %.3f s); " \
	       "native cat %.3f s, busybox cat %.3f s\n", m, g, o, g - o, n, b
	printf "share-read ratio: guest/native cat %.2f with boot, %.2f " \
	       "without\n", g / n, (g - o) / n
}'
