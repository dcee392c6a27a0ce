#!/usr/bin/env bash
# Run a meson suite of one build directory on a standard AMD SVM KVM under
# QEMU (scripts/qemu-svm.sh), dealt over one emulated machine per host core
# (each machine has one CPU: see qemu-svm.sh), longest first to the least
# loaded (svm-shard.py, by svm-durations.txt).  Each machine writes
# DIR/meson-logs/svm-N.json; the exit status is 1 if any failed.
#
#   svm-run.sh DIR SUITE
set -uo pipefail
dir=$1 suite=$2
top=$(cd "$(dirname "$0")/../.." && pwd)
n=$(nproc)
[ "$n" -gt 4 ] && n=4
mapfile -t names < <(meson test -C "$dir" --no-rebuild --list --suite "$suite" \
	2>/dev/null | sed -n 's|^[^ ]* / ||p')
if [ ${#names[@]} -eq 0 ]; then
	echo "svm-run.sh: no tests in suite $suite of $dir" >&2
	exit 1
fi
echo "svm-run.sh: ${#names[@]} tests of $dir on $n emulated SVM machines"
rm -f "$dir"/meson-logs/svm-*.json
mapfile -t dealt < <(printf '%s\n' "${names[@]}" |
	"$top/tests/kvm/svm-shard.py" "$n")
pids=() logs=()
for ((i = 0; i < n; i++)); do
	mapfile -t shard < <(printf '%s\n' "${dealt[@]}" | sed -n "s/^$i //p")
	[ ${#shard[@]} -gt 0 ] || continue
	"$top/scripts/qemu-svm.sh" --timeout 3000 -- meson test -C "$dir" \
		--no-rebuild --logbase "svm-$i" --print-errorlogs \
		--num-processes 1 "${shard[@]}" 2>&1 | sed -u "s/^/[svm$i] /" &
	pids+=($!)
	logs+=("$dir/meson-logs/svm-$i.json")
done
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done
# A machine that never got to write its log failed whatever it printed.
for l in "${logs[@]}"; do
	[ -s "$l" ] || { echo "svm-run.sh: no $l: that machine failed" >&2; status=1; }
done
exit $status
