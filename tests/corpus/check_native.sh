#!/usr/bin/env bash
# A corpus program in the guest against its native run.
#
#   check_native.sh VMM CPUS PROG [ARGS...]
#
# Runs PROG natively (empty environment, a fresh directory as cwd) and as
# `vmm run --cpus CPUS PROG ARGS`, and requires the same stdout and exit
# status.  In ARGS, @DIR@ stands for a writable directory (the native one,
# /tmp in the guest) and @FILE=PATH@ for a host file (PATH natively, packed
# at /data/BASENAME in the guest).  PROG "missing:WHAT" is a program meson
# could not build: a failure naming WHAT, never a skip (./test installs
# every library through scripts/deps.sh).  Run through kvm-test.sh.
set -uo pipefail
vmm=$1 cpus=$2 prog=$3
shift 3
case $prog in
missing:*)
	echo "FAIL: not built: ${prog#missing:} is not installed (scripts/deps.sh installs it)"
	exit 1 ;;
esac

prog=$(realpath -- "$prog") vmm=$(realpath -- "$vmm")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/dir"
nargs=() gargs=() files=()
for a in "$@"; do
	case $a in
	@FILE=*@)
		f=${a#@FILE=}; f=${f%@}
		f=$(realpath -- "$f")
		nargs+=("$f"); gargs+=("/data/$(basename -- "$f")")
		files+=(--file "$f:/data/$(basename -- "$f")") ;;
	*) nargs+=("${a//@DIR@/$tmp/dir}"); gargs+=("${a//@DIR@//tmp}") ;;
	esac
done

(cd "$tmp/dir" && env -i "$prog" "${nargs[@]}") >"$tmp/native" 2>"$tmp/native.err" </dev/null
nstatus=$?
rm -rf "$tmp/dir"/*
# CORPUS_MEM: the guest's --mem (256M unless set; empty: vmm's default).
mem=(--mem "${CORPUS_MEM-256M}")
[ -z "${CORPUS_MEM-256M}" ] && mem=()
timeout -k 5 300 "$vmm" run --cpus "$cpus" "${mem[@]}" --timeout 240 "${files[@]}" \
	-- "$prog" "${gargs[@]}" >"$tmp/guest" 2>"$tmp/guest.err" </dev/null
gstatus=$?

fail=0
if [ ! -s "$tmp/native" ]; then
	echo "FAIL: the native run printed nothing (status $nstatus)"
	cat "$tmp/native.err"
	fail=1
fi
if [ "$nstatus" != "$gstatus" ]; then
	echo "FAIL: exit status $gstatus in the guest, $nstatus natively"
	fail=1
fi
if ! cmp -s "$tmp/native" "$tmp/guest"; then
	echo "FAIL: stdout differs from the native run (< native, > guest):"
	diff "$tmp/native" "$tmp/guest" | head -30
	fail=1
fi
if [ $fail = 1 ]; then
	echo "--- guest stderr:"
	tail -20 "$tmp/guest.err"
	exit 1
fi
echo "ok: $(wc -l <"$tmp/native") lines equal to native on $cpus vCPU(s)"
