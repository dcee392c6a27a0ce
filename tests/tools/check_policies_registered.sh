#!/usr/bin/env bash
# Every file in pmu/policies/ is a policy the build registered (its name
# in pmu_policies of pmu/meson.build), and every registered policy has its
# file: a policy file left out of the list would be neither built nor
# tested, silently.  The names come from `vmm --list-policies`, the table
# the tests enumerate.
#
#   check_policies_registered.sh POLICY_DIR VMM
set -uo pipefail
dir=$1 vmm=$2
files=$(cd "$dir" && ls -- *.c | sed 's/\.c$//' | sort)
listed=$("$vmm" --list-policies | cut -f1 | sort)
[ -n "$listed" ] || { echo "FAIL: vmm --list-policies printed no policy"; exit 1; }
if [ "$files" != "$listed" ]; then
	echo "FAIL: pmu/policies/*.c and the registered policies differ"
	echo "(add the file's name to pmu_policies in pmu/meson.build):"
	diff <(echo "$files") <(echo "$listed")
	exit 1
fi
echo "ok: $(echo $listed)"
