#!/usr/bin/env bash
# Run meson suites of one or more build directories on a standard AMD SVM
# KVM under QEMU (scripts/qemu-svm.sh), dealt over one emulated machine per
# host core (each machine has one CPU: see qemu-svm.sh), longest first to
# the least loaded (svm-shard.py, by svm-durations.txt).  All the pairs'
# tests are dealt together, so each machine boots once and the machines
# finish together, not once per build.  Each machine writes
# DIR/meson-logs/svm-N.json for each DIR it ran tests of; the exit status
# is 1 if any failed.
#
#   svm-run.sh DIR SUITE [DIR SUITE]...
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)

# Inside one emulated machine: each build directory's share of the
# machine's list (DIR NAME lines), one meson test per directory.
if [ "${1:-}" = --machine ]; then
	i=$2 list=$3 status=0
	mapfile -t dirs < <(awk '!seen[$1]++ {print $1}' "$list")
	for dir in "${dirs[@]}"; do
		mapfile -t shard < <(awk -v d="$dir" '$1 == d {print $2}' "$list")
		echo "== $dir: ${#shard[@]} tests"
		meson test -C "$dir" --no-rebuild --logbase "svm-$i" \
			--print-errorlogs --num-processes 1 "${shard[@]}" || status=1
	done
	exit $status
fi

[ $# -ge 2 ] && [ $(($# % 2)) -eq 0 ] ||
	{ echo "usage: svm-run.sh DIR SUITE [DIR SUITE]..." >&2; exit 2; }
n=$(nproc)
[ "$n" -gt 4 ] && n=4
lines=() dirs=()
while [ $# -gt 0 ]; do
	dir=$1 suite=$2
	shift 2
	mapfile -t names < <(meson test -C "$dir" --no-rebuild --list \
		--suite "$suite" 2>/dev/null | sed -n 's|^[^ ]* / ||p')
	if [ ${#names[@]} -eq 0 ]; then
		echo "svm-run.sh: no tests in suite $suite of $dir" >&2
		exit 1
	fi
	echo "svm-run.sh: ${#names[@]} tests of $dir (suite $suite)"
	rm -f "$dir"/meson-logs/svm-*.json "$dir"/meson-logs/svm-list-*.txt
	for t in "${names[@]}"; do
		lines+=("$dir $t")
	done
	dirs+=("$dir")
done
echo "svm-run.sh: ${#lines[@]} tests on $n emulated SVM machines"
mapfile -t dealt < <(printf '%s\n' "${lines[@]}" |
	"$top/tests/kvm/svm-shard.py" "$n")
# The lists live in the first build directory: the emulated machine
# shares the current directory's tree, not the host's /tmp.
listdir=$(realpath "${dirs[0]}")/meson-logs
pids=() logs=()
for ((i = 0; i < n; i++)); do
	list=$listdir/svm-list-$i.txt
	printf '%s\n' "${dealt[@]}" | sed -n "s/^$i //p" >"$list"
	[ -s "$list" ] || continue
	"$top/scripts/qemu-svm.sh" --timeout 3000 -- \
		"$top/tests/kvm/svm-run.sh" --machine "$i" "$list" 2>&1 |
		sed -u "s/^/[svm$i] /" &
	pids+=($!)
	while read -r d; do
		logs+=("$d/meson-logs/svm-$i.json")
	done < <(awk '!seen[$1]++ {print $1}' "$list")
done
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done
# A machine that never got to write its log failed whatever it printed.
for l in "${logs[@]}"; do
	[ -s "$l" ] || { echo "svm-run.sh: no $l: that machine failed" >&2; status=1; }
done
exit $status
