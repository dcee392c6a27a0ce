#!/usr/bin/env bash
# One of PAPI's own tests in the guest must say PASSED (PAPI's test_pass()
# prints it at the end of a line, after kufrin's "Done."; "PASSED with
# WARNING" does not count):
#   check_passed.sh VMM PROG [vmm run options...]
#
# CHECK_PASSED_EMULATED: under QEMU's emulated KVM (PERFVISOR_EMULATED_KVM,
# exported by scripts/qemu-svm.sh) the program's arguments (kufrin's
# threads, say).
set -uo pipefail
vmm=$1 prog=$2
shift 2
pargs=()
if [ -n "${PERFVISOR_EMULATED_KVM:-}" ] && [ -n "${CHECK_PASSED_EMULATED:-}" ]; then
	read -ra pargs <<<"$CHECK_PASSED_EMULATED"
	echo "emulated KVM: $(basename "$prog") ${pargs[*]}"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
timeout -k 5 300 "$vmm" run "$@" -- "$prog" "${pargs[@]}" >"$tmp/out" \
	2>"$tmp/err" </dev/null
status=$?
if [ "$status" != 0 ] || ! grep -q 'PASSED$' "$tmp/out"; then
	echo "FAIL: $(basename "$prog") exited $status without PASSED:"
	tail -n 20 "$tmp/out" "$tmp/err"
	exit 1
fi
echo "$(basename "$prog"): PASSED"
