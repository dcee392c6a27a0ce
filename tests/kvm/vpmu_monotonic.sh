#!/usr/bin/env bash
# Per-thread counts never decrease (tsc source, 3 threads on 2 vCPUs).  A
# hang is retried once (hang_retry.sh); the monotonicity check never is.
#
#   vpmu_monotonic.sh VMM VPMU_TEST
set -uo pipefail
. "$(dirname "$0")/hang_retry.sh"
vmm=$1 prog=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
hang_retry "$tmp/out" "$tmp/err" \
	"$vmm" run -v --cpus 2 --timeout 60 -- "$prog" monotonic
r=$?
cat "$tmp/out"
grep -v "kvm " "$tmp/err" >&2
[ $r = 0 ]
