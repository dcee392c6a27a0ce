#!/usr/bin/env bash
# x86_insn_decode() against objdump: every instruction of each binary's
# .text must start where objdump's linear disassembly starts one.  Counting
# by blocks puts an int3 on the byte where the decoder says a branch
# starts, so one wrong length would corrupt a program.
#
#   check_insn_lengths.sh INSNLEN BINARY...
set -uo pipefail
insnlen=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for bin in "$@"; do
	objcopy -O binary --only-section=.text "$bin" "$tmp/text" || exit 1
	addr=$(readelf -SW "$bin" |
		awk '{for (i = 1; i < NF; i++) if ($i == ".text") print $(i + 2)}')
	"$insnlen" "$tmp/text" "$addr" >"$tmp/mine" || exit 1
	objdump -d --no-show-raw-insn -j .text "$bin" |
		awk -F: '/^ +[0-9a-f]+:\t/ {gsub(/ /, "", $1); print $1}' >"$tmp/ref"
	n=$(wc -l <"$tmp/ref")
	diffs=$(diff "$tmp/ref" "$tmp/mine" | grep -c '^[<>]')
	echo "$bin: $n instructions, $diffs starts differ from objdump's"
	if [ "$n" -lt 100 ] || [ "$diffs" -ne 0 ]; then
		diff "$tmp/ref" "$tmp/mine" | head -5
		status=1
	fi
done
exit $status
