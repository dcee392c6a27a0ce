#!/usr/bin/env bash
# /proc and /sys in the guest (guest-kernel/procfs.c) read by busybox, with
# the values the guest really has:
#   procfs.sh VMM BUSYBOX CPUID_PROG CPUS
# CPUID_PROG prints CPUID's vendor, family, model and stepping as
# /proc/cpuinfo words them: every processor block must say the same.
set -uo pipefail
vmm=$1 busybox=$2 cpuid=$3 cpus=$4
last=$((cpus - 1))
want_list=0
[ "$cpus" -gt 1 ] && want_list="0-$last"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/check.sh" <<SH
fail() { echo "FAIL: \$*"; bad=1; }
bad=0
is() {	# FILE WANT
	got=\$(cat "\$1" 2>&1)
	[ "\$got" = "\$2" ] || fail "\$1 is '\$got', want '\$2'"
}
is /sys/devices/system/cpu/online "$want_list"
is /sys/devices/system/cpu/possible "$want_list"
is /sys/devices/system/cpu/present "$want_list"
is /sys/devices/system/node/node0/cpulist "$want_list"
is /proc/sys/kernel/perf_event_paranoid -1
is /proc/sys/kernel/nmi_watchdog 0
is /sys/bus/event_source/devices/cpu/type 4
is /sys/bus/event_source/devices/software/type 1
is /sys/devices/system/cpu/cpu$last/topology/core_id $last
is /sys/devices/system/cpu/cpu$last/topology/thread_siblings_list $last
test -d /sys/devices/system/cpu/cpu$last || fail "no cpu$last"
test -e /sys/devices/system/cpu/cpu$cpus && fail "cpu$cpus exists"
test -e /sys/devices/cpu/events/slots && fail "topdown events exist"
n=\$(grep -c '^processor' /proc/cpuinfo)
[ "\$n" = $cpus ] || fail "/proc/cpuinfo has \$n processors"
/bin/cpuid >/tmp/cpuid
for key in vendor_id 'cpu family' 'model.*: [0-9]' stepping; do
	want=\$(grep "^\$key" /tmp/cpuid)
	got=\$(grep "^\$key" /proc/cpuinfo | sort -u)
	[ "\$got" = "\$want" ] || fail "cpuinfo '\$got', CPUID '\$want'"
done
grep -q '^flags.* fpu .*\$' /proc/cpuinfo || fail "no fpu flag"
[ "\$(readlink /proc/self/exe)" = /bin/busybox ] ||
	fail "readlink /proc/self/exe: \$(readlink /proc/self/exe)"
[ "\$(readlink /proc/\$\$/exe)" = /bin/busybox ] ||
	fail "readlink /proc/\$\$/exe: \$(readlink /proc/\$\$/exe)"
test -e /proc/99999 && fail "/proc/99999 exists"
grep -q ' r-xp .* /bin/busybox\$' /proc/self/maps || fail "maps: no text"
grep -q ' \[stack\]\$' /proc/self/maps || fail "maps: no stack"
grep -q '^Pid:' /proc/self/status || fail "status: no Pid"
(echo data >/proc/cpuinfo) 2>/dev/null && fail "cpuinfo is writable"
[ \$bad = 0 ] && echo "procfs: ok"
SH
out=$(timeout -k 5 120 "$vmm" run --cpus "$cpus" \
	--file "$tmp/check.sh:/check.sh" --file "$cpuid:/bin/cpuid" \
	-- "$busybox" sh /check.sh 2>&1)
echo "$out"
[ "$out" = "procfs: ok" ] || { echo "FAIL: see above"; exit 1; }
