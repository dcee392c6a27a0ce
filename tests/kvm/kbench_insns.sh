#!/usr/bin/env bash
# Emulated guest-kernel instructions per kernel path, exactly: kbench runs
# one path K times under `vmm stat --source step -e instructions:k` (the
# VMM single-steps CPL0), once more with 0 times, and the difference over
# K is the path's cost, start-up and exit cancelled.  Beside each, the
# microseconds of one kbench run against its floor (getpid's leaf entry).
# On kvm_pvm every one of these instructions is emulated (0.25-1 us each,
# printed at the end), so this is the kernel's hot-path budget
# (docs/specification.md).  Prints one line per path and fails when
# getpid, the leaf path of entry.S, takes more than MAX, or where the host
# emulates kernel code (kvm_pvm), a 4 KiB pread64 or pwrite64 of a /tmp
# file more than 80 emulated instructions (issue 27: their leaf paths,
# guest-kernel/file_leaf.S; the step source's counted run takes the full
# path, as it does for every system call but getpid and gettid), or a
# virtual PMI of a program sampling itself more than 600 (issue 26), or,
# on every host, more than one exit to the VMM.
#
#   kbench_insns.sh VMM KBENCH [MAX_GETPID]
set -uo pipefail
vmm=$1 prog=$2 max=${3:-40}
K=64
kcount() {
	local out

	# The count only if kbench ran the path and exited 0.
	out=$("$vmm" stat --timeout 200 --source step -e instructions:k -x, \
		-- "$prog" loop "$1" "$2" 2>&1 >/dev/null) || return
	awk -F, '$3 == "instructions:k" {print $1}' <<<"$out"
}
# The same run's microseconds (kbench with no arguments, one JSON line):
# getpid's leaf path, the cheapest kernel entry there is, is the floor.
# Its -v banner says which KVM: kvm_pvm emulates every kernel instruction,
# and so gives the uncounted runs below a number; a standard KVM's
# insn_emulation counts only the odd port access, so those runs (28 boots)
# are not made there.
err=$(mktemp)
us_json=$("$vmm" run -v --timeout 200 -- "$prog" 2>"$err" | tail -n 1)
pvm=$(grep -c 'kvm_pvm KVM' "$err")
rm -f "$err"
us() {
	sed -n "s/.*\"$1_us\": \([0-9.]*\).*/\1/p" <<<"$us_json"
}
floor=$(us getpid)
# KVM's insn_emulation summed over the vCPUs of one vmm command (-v),
# where the host reports it (kvm_pvm emulates every kernel instruction;
# standard KVM none).
insn_emulation() {
	"$vmm" "$@" 2>&1 >/dev/null |
		awk '/kvm insn_emulation / {s += $NF} END {if (NR) print s}'
}
# Uncounted: without the offset policy's fold that counting adds at each
# switch.
kemul() {
	[ "$pvm" -gt 0 ] || return 0
	insn_emulation run -v --timeout 200 -- "$prog" loop "$1" "$2"
}
status=0
declare -A unc
declare -A unc_max=([pread]=80 [pwrite]=80)
# issue 26: a virtual PMI's path, one ring record (561-727 emulated
# instructions and 4 exits before its two page-table walks were cached and
# its MSR accesses became one hypercall).
pmi_max=600
# Runs of K, fewer where a run is thousands of instructions (each one
# stepped by the VMM in the counted run).
declare -A runs=([brk]=8 [mremap]=8)
for path in getpid getppid futex futexwait sigmask pipe fault yield pread pwrite brk mremap; do
	k=${runs[$path]:-$K}
	a=$(kcount "$path" 0) b=$(kcount "$path" $k)
	if [ -z "$a" ] || [ -z "$b" ] || [ "$b" -le "$a" ]; then
		echo "FAIL: $path: no instructions:k count, or none more for $k runs ('$a', '$b')"
		status=1
		continue
	fi
	per=$(( (b - a) / k ))
	[ "$path" = yield ] && per=$(( (b - a) / (2 * k) ))
	ea=$(kemul "$path" 0) eb=$(kemul "$path" $k) un=
	if [ -n "$ea" ] && [ -n "$eb" ] && [ "$eb" -gt "$ea" ]; then
		div=$k
		[ "$path" = yield ] && div=$((2 * k))
		unc[$path]=$(( (eb - ea) / div ))
		un=", ${unc[$path]} emulated uncounted"
	fi
	key=${path/yield/switch} t=$(us "${path/yield/switch}") at=
	if [ -n "$t" ] && [ -n "$floor" ]; then
		at=", $t us = $(awk -v t="$t" -v f="$floor" \
			'BEGIN {printf "%.1f", t / f}')x the floor's $floor us"
	fi
	echo "$path: $per kernel instructions per $key" \
		"(runs of 0 and $k: $a, $b$un$at)"
	if [ "$path" = getpid ] && [ "$per" -gt "$max" ]; then
		echo "FAIL: getpid takes $per kernel instructions (at most $max)"
		status=1
	fi
	lim=${unc_max[$path]:-}
	if [ -n "$lim" ] && [ -n "${unc[$path]:-}" ] && [ "${unc[$path]}" -gt "$lim" ]; then
		echo "FAIL: $path takes ${unc[$path]} emulated instructions (at most $lim)"
		status=1
	fi
done
[ -n "$floor" ] ||
	echo "no microseconds: kbench printed '$us_json'"
# The switch proper: what a yield adds to a system call that does nothing
# (getppid), uncounted, where the host reports emulated instructions.
if [ -n "${unc[yield]:-}" ] && [ -n "${unc[getppid]:-}" ]; then
	echo "switch beyond its system call: $(( unc[yield] - unc[getppid] ))" \
		"emulated instructions (yield ${unc[yield]} - getppid ${unc[getppid]})"
fi
# What per-thread counting adds to a switch: the same yields counted with
# the tsc source (offset policy, a-mode fold at each switch), where the
# host reports emulated instructions.
kemul_counted() {
	[ "$pvm" -gt 0 ] || return 0
	insn_emulation stat -v --timeout 200 -e cycles -- "$prog" loop yield "$1"
}
if [ -n "${unc[yield]:-}" ]; then
	ca=$(kemul_counted 0) cb=$(kemul_counted $K)
	if [ -n "$ca" ] && [ -n "$cb" ] && [ "$cb" -gt "$ca" ]; then
		c=$(( (cb - ca) / (2 * K) ))
		echo "counted switch (tsc source, offset policy): $c emulated" \
			"instructions, $(( c - unc[yield] )) for the counters' fold"
	fi
fi
# A program that samples itself (perf_event_open, cycles:u into its mmap
# ring, as PAPI's overflow and profil do): what each virtual PMI costs the
# kernel, counted (the step source: its cycles overflow by the host timer,
# whose kick must not be lost among the stepped kernel instructions'
# exits, or the program spins for ever) and uncounted under the tsc
# source, where the host reports emulated instructions.  Counted on
# kvm_pvm only: a standard KVM's single step steps the user code too,
# every instruction of the periods' spin an exit.
ka=x kb=x
[ "$pvm" -gt 0 ] && ka=$(kcount pmi 0) kb=$(kcount pmi $K)
if [ "$ka" = x ]; then
	echo "pmi: not counted here (a standard KVM)"
elif [ -z "$ka" ] || [ -z "$kb" ] || [ "$kb" -le "$ka" ]; then
	echo "FAIL: pmi: no instructions:k count, or none more for $K PMIs ('$ka', '$kb')"
	status=1
else
	echo "pmi: $(( (kb - ka) / K )) kernel instructions per PMI (runs of 0 and $K: $ka, $kb)"
fi
pa=$(kemul pmi 0) pb=$(kemul pmi $K)
if [ -n "$pa" ] && [ -n "$pb" ] && [ "$pb" -gt "$pa" ]; then
	pe=$(( (pb - pa) / K ))
	echo "pmi: $pe emulated instructions per PMI" \
		"(perf_event sampling, one ring record; runs of 0 and $K: $pa, $pb)"
	if [ "$pe" -gt "$pmi_max" ]; then
		echo "FAIL: a PMI takes $pe emulated instructions (at most $pmi_max)"
		status=1
	fi
fi
# Its exits to the VMM, on every host: one, the re-arm that acknowledges
# too (PV_HC_PMU_REARM); the status comes from the vCPU page.
vmm_exits() {
	"$vmm" run -v --timeout 200 -- "$prog" loop pmi "$1" 2>&1 >/dev/null |
		awk '/exits to the VMM/ {s += $4} END {if (NR) print s}'
}
xa=$(vmm_exits 0) xb=$(vmm_exits $K)
if [ -z "$xa" ] || [ -z "$xb" ] || [ "$xb" -le "$xa" ]; then
	echo "FAIL: pmi: no exit count, or none more for $K PMIs ('$xa', '$xb')"
	status=1
else
	echo "pmi: $(( (xb - xa) / K )).$(( (xb - xa) % K * 10 / K )) exits to" \
		"the VMM per PMI (runs of 0 and $K: $xa, $xb)"
	if [ $(( xb - xa )) -gt $(( K + K / 4 )) ]; then
		echo "FAIL: a PMI takes more than one exit to the VMM"
		status=1
	fi
fi
# What one emulated instruction costs in this run, and an entry without
# any: the line through getpid and getppid (time against instructions).
if [ -n "${unc[getppid]:-}" ] && [ -n "${unc[getpid]:-}" ] &&
   [ -n "$floor" ] && [ "${unc[getppid]}" -gt "${unc[getpid]}" ]; then
	awk -v a="$floor" -v b="$(us getppid)" -v na="${unc[getpid]}" \
	    -v nb="${unc[getppid]}" 'BEGIN {
		c = (b - a) / (nb - na)
		printf "per emulated instruction: %.2f us; an entry with none: %.1f us\n",
		       c, a - na * c }'
fi
exit $status
