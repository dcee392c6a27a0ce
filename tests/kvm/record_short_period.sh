#!/usr/bin/env bash
# A period shorter than the PMI handler's own cycles must not livelock
# (the tsc source counts the emulated handler): samples are throttled, and
# keep coming (at least 10: a host-timer kick just before KVM_RUN was once
# lost, which stopped sampling after the first sample).  The same holds
# for the VMM's sampler, whose kicks must not outrun KVM's entry.
#
#   record_short_period.sh VMM HOT [SAMPLER]
set -uo pipefail
vmm=$1 prog=$2 sampler=${3:-vmm}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$vmm" record --sampler "$sampler" --timeout 60 -e cycles -c 20000 -o "$tmp/p.data" \
	-- "$prog" 20000000 >/dev/null 2>"$tmp/err"
r=$?
cat "$tmp/err" >&2
[ $r = 0 ] && grep -Eq "record: [0-9]{2,} samples of cycles" "$tmp/err"
