#!/usr/bin/env bash
# vmm record + vmm report on the Lua interpreter running a script: the
# report names the interpreter's functions.  The script runs at size 13,
# where fib(33) in the bytecode loop outweighs table.sort (at size 10 its C
# API calls, lua_geti and lua_seti, outranked luaV_execute under QEMU's SVM
# KVM).  The hottest symbol must be one of liblua's own (its symbol table,
# static functions included), luaV_execute among the first five, and
# liblua's functions must hold at least 60% of the samples (the rest: libc,
# and system calls charged to their user-mode call sites).
#
#   check_record_lua.sh VMM LUA LIBLUA_A
set -uo pipefail
vmm=$1 lua=$2 lib=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

nm "$lib" 2>/dev/null | awk '$2 ~ /^[tT]$/ {print $3}' | sort -u >"$tmp/syms"
[ -s "$tmp/syms" ] || { echo "FAIL: no symbols in $lib"; exit 1; }
"$vmm" record -e cycles -c 5000000 -o "$tmp/p.data" -- "$lua" 13 >"$tmp/out" ||
	{ echo "FAIL: record"; exit 1; }
grep -q "^fib	3524578$" "$tmp/out" || { echo "FAIL: the script's output:"; cat "$tmp/out"; exit 1; }
"$vmm" report -i "$tmp/p.data" --sort sym >"$tmp/report" ||
	{ echo "FAIL: report"; exit 1; }
head -25 "$tmp/report"
samples=$(sed -n 's/^# Samples: \([0-9]*\) .*/\1/p' "$tmp/report")
read -r top lua_share top5 < <(awk 'NR == FNR {s[$1] = 1; next}
	!/^#/ && NF >= 2 {
		gsub("%", "", $1); n++
		if (n == 1) top = $NF
		if (n <= 5) top5 = top5 "," $NF
		if ($NF in s) l += $1
	}
	END {print top, l + 0, top5 ","}' "$tmp/syms" "$tmp/report")
echo "samples $samples, hottest $top, liblua ${lua_share}%, first five $top5"
fail=0
[ "${samples:-0}" -ge 50 ] || { echo "FAIL: ${samples:-no} samples, want >= 50"; fail=1; }
grep -qx -- "$top" "$tmp/syms" || { echo "FAIL: hottest symbol $top is not liblua's"; fail=1; }
case $top5 in *,luaV_execute,*) ;; *) echo "FAIL: luaV_execute not in the first five"; fail=1 ;; esac
awk -v s="$lua_share" 'BEGIN {exit !(s >= 60)}' ||
	{ echo "FAIL: liblua holds ${lua_share}% of the samples, want >= 60%"; fail=1; }
[ $fail = 0 ] && echo ok
exit $fail
