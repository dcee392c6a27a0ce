#!/usr/bin/env bash
# PAPI's own test suite (tests/papi: Debian's papi-examples, unchanged) in
# the guest and natively, and its table in docs/compatibility.md:
#
#   scripts/papi-suite.sh [-s SOURCE] [-c CPUS] [-t SECONDS] [-n]
#                         [-k TEST,...] [-T TEST=SECONDS,...] [BUILD_DIR]
#                         [-- VMM RUN OPTIONS...]
#
# Each ctest and validation test of PAPI's makefile lists runs once on
# this host and once in the guest (`vmm run --source SOURCE`, default tsc),
# with a timeout each (default 60 s), without PAPI's TESTS_QUIET so that a
# test says why it skips.  Its result is PAPI's own word (PASSED, SKIPPED,
# FAILED) and the line that says why; a run that prints none of them is
# TIMEOUT, KILLED by a signal, or NO RESULT with its exit status.  libpfm4's
# check_events and showevtinfo run in the guest too; their output goes
# under the table.  -n: print the table, leave the docs alone.  Options
# after -- go to every `vmm run` (say, --file and --env to try another
# papi_events.csv through PAPI_CSV_EVENT_FILE); with them the docs are
# left alone too.  -k: only the tests named (implies -n).  -T: a timeout
# of their own for the tests named (under QEMU's emulation some need
# minutes: multiplex1's 200,000 reads and loops calibrated to 2 s).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# byte_profile's 200 MB of buffers need more than vmm run's default.
source=tsc cpus=1 tmo=60 write=1 mem=512M only=
declare -A own_tmo
while getopts "s:c:t:nk:T:" opt; do
	case $opt in
	s) source=$OPTARG ;;
	c) cpus=$OPTARG ;;
	t) tmo=$OPTARG ;;
	n) write=0 ;;
	k) only=",$OPTARG," write=0 ;;
	T) IFS=, read -ra kv <<<"$OPTARG"
	   for x in "${kv[@]}"; do own_tmo[${x%%=*}]=${x#*=}; done ;;
	*) echo "usage: $0 [-s SOURCE] [-c CPUS] [-t SECONDS] [-n] [-k TEST,...] [-T TEST=SECONDS,...] [BUILD_DIR]" >&2
	   exit 2 ;;
	esac
done
shift $((OPTIND - 1))
build=$top/build
if [ $# -gt 0 ] && [ "$1" != -- ]; then
	build=$1
	shift
fi
build=$(cd "$build" && pwd)
extra=()
if [ "${1:-}" = -- ]; then
	shift
	extra=("$@")
	write=0
fi
vmm=$build/vmm/vmm
dir=$build/tests/papi
examples=$(meson introspect --buildoptions "$build" |
	python3 -c 'import json,sys
print([o["value"] for o in json.load(sys.stdin) if o["name"] == "papi_examples"][0])')
if [ ! -x "$vmm" ] || [ ! -d "$dir" ] || [ ! -x "$dir/zero" ]; then
	echo "$0: build $build first (PAPI's tests need libpapi-dev papi-examples)" >&2
	exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# RESULT<TAB>REASON from a run's stdout, stderr and exit status.  PAPI's
# test_fail() prints "Line # N Error..." after FAILED; test_skip() prints
# only SKIPPED, so the reason is the line the test printed before it.
classify() {	# OUT ERR STATUS
	local out=$1 err=$2 st=$3 line reason
	if grep -q 'FAILED' "$out"; then
		reason=$(grep -m1 '^Line # .*Error' "$out")
		# perror() (PAPI_ESYS) says it on stderr instead.
		[ -n "$reason" ] || reason="$(grep -m1 -o '^Line # [0-9]*' "$out"): $(
			grep -v -e '^\[guest\]' -e '^vmm:' "$err" | grep -m1 -i 'error')"
		printf 'FAILED\t%s\n' "$reason"
	elif grep -q 'PASSED' "$out"; then
		line=$(grep -m1 -o 'PASSED.*' "$out")
		reason=$(grep -m1 '^WARNING' "$out")
		printf '%s\t%s\n' "$line" "$reason"
	elif grep -q 'SKIPPED' "$out"; then
		reason=$(grep -v -e '^[[:space:]]*$' "$out" |
			grep -B1 -m1 SKIPPED | head -1)
		case $reason in *SKIPPED*) reason= ;; esac
		[ -n "$reason" ] || reason=$(grep -v -e '^\[guest\]' -e '^vmm:' \
			-e '^[[:space:]]*$' "$err" | tail -1)
		printf 'SKIPPED\t%s\n' "$reason"
	elif [ "$st" = 124 ]; then
		printf 'TIMEOUT\tno result in %s s\n' "$t"
	elif [ "$st" -gt 128 ]; then
		printf 'KILLED\tsignal %d; %s\n' $((st - 128)) "$(tail -1 "$err")"
	else
		printf 'NO RESULT\texit %s; %s\n' "$st" \
			"$(cat "$out" "$err" | grep -v '^[[:space:]]*$' | tail -1)"
	fi
}

# Cells of a markdown table: no pipes, no backquotes, one line.
cell() { tr -d '`\r' | tr '|' '/' | cut -c1-160; }

"$top/tests/papi/ctest-lists.sh" "$examples" >"$tmp/lists"
declare -A lists
order=()
while read -r list name; do
	[ -z "$only" ] || [[ $only == *",$name,"* ]] || continue
	[ -n "${lists[$name]:-}" ] || order+=("$name")
	lists[$name]="${lists[$name]:+${lists[$name]}, }$list"
done <"$tmp/lists"

# The attach tests start these by name from the working directory, and
# exec_overflow and system_child_overflow child_overflow, the latter with
# system(): /bin/sh, busybox's, as PAPI's run_tests.sh has a shell.
helpers=()
for h in attach_target burn child_overflow; do
	[ -x "$dir/$h" ] && helpers+=(--file "$dir/$h:/$h")
done
sh=$(command -v busybox) && helpers+=(--file "$sh:/bin/sh")

# PAPI's run_tests.sh leaves out what run_tests_exclude.txt names (helper
# programs, long runners): so does this, with the file's comment as reason.
declare -A excluded
why=
while IFS= read -r line; do
	case $line in
	'#'*) why=${line#\# } ;;
	'') why= ;;
	ctests/*|validation_tests/*) excluded[${line#*/}]=$why ;;
	esac
done <"$examples/run_tests_exclude.txt"

# Why a test does not pass in the guest when the reason is the guest's
# (or the test's own, the same natively) and not a bug: listed under the
# table for each test here that did not pass.  Found by reading the test
# and the guest kernel; keep them true.
declare -A why
why[tenth]="the virtual PMU has no cache events: PAPI_L1_TCM, _ICM and _DCM are not in its preset table (/proc/perfvisor/papi_events.csv, docs/design.md 4.1), so PAPI_query_event says no"
why[inherit]="PAPI_set_opt(PAPI_INHERIT) checks its permission by opening PERF_COUNT_HW_INSTRUCTIONS (perf_event.c: check_permissions()), which the tsc source does not have (ENOENT: Event does not exist); under the step source it gets past it, and attr.inherit itself is tested by perf-abi-step"
for t in max_multiplex mendes-alt sdsc2-mpx sdsc2-mpx-noreset; do
	why[$t]="PAPI_set_multiplex() (and PAPI_create_multiplex()) check their permission by opening PERF_COUNT_HW_INSTRUCTIONS (perf_event.c: check_permissions()), which the tsc source does not have (ENOENT: Event does not exist), whatever events the test counts; the same natively, where this host has no PMU"
done
# Presets of events the virtual PMU does not count.
why[derived]="PAPI's derived presets are all of events the virtual PMU lacks (cache, floating-point, conditional branches): its preset table has none, so the test finds no event"
why[papi_br_msp]="mispredictions are the step source's modeled predictor's (design.md 4.4a), counted only where user code runs by blocks: under another source, or with --step-mode single, the preset table has no PAPI_BR_MSP, and the test adds it by name once PAPI_BR_INS adds, without asking whether it exists (\"Event does not exist\")"
why[multiplex1_pthreads]="its threads take the events of PAPI_FP_INS, PAPI_TOT_INS, PAPI_L1_DCM and PAPI_L1_ICM that PAPI_query_event finds and case4 adds the second without checking there is one: the virtual PMU has only PAPI_TOT_INS (PAPI_add_event of event 0: Invalid argument), as would any PMU with one of the four"
why[multiplex3_pthreads]="as overflow3_pthreads: 4 threads run do_stuff() forever beside the multiplexing one, all on one vCPU, each round of do_stuff() 20,000 read() calls; the measured thread gets a fifth of the vCPU"
why[sdsc-mpx]="it compares each multiplexed count with a separate run of the same loop and allows 20%: instructions and branches agree to 10^-7 under the step source; cycles counted alone run the loop natively, but beside instructions they run it from the code cache, whose counting prologues slow do_flops3 by 17-20% (8,400 against 10,000 Mflop/s in one run), so it passes or fails by a few percent of the host's noise"
why[sdsc4-mpx]="PAPI's own bug: remove_native_events() (papi_internal.c) compacts the event set's NativeInfoArray without moving ni_papi_code, from which the perf_event component takes each event's encoding, so after PAPI_remove_event(PAPI_TOT_CYC) PAPI opens PAPI_TOT_INS with cycles' encoding (0x3c, in the attr the guest kernel gets), and once PAPI_BR_INS is added back it reports the branch count as PAPI_TOT_INS; all in user space, so the same natively on any PMU"
why[second]="it wants the kernel and user cycles of two runs to add up to within 20% of the cycles of a third; counting kernel instructions single-steps the kernel, whose exits the step source's cycles leave out (design.md 4.5): it passes, and a host busy enough to slow one run more than the others can still part them (the table's run of 2026-11-26 shared the host with other tests; run alone after it, it passed twice)"
why[shlib]="Debian's libxcrypt has no encrypt() any more: the test, linked dynamically as PAPI's makefile links it, finds its four shared libraries in /proc/self/maps (PAPI_get_shared_lib_info), then dlopen()s libcrypt.so and fails at dlsym(\"encrypt\"); the same natively"
why[destroy]="16384 rounds of create, add, start, stop, remove, destroy: 9 system calls each, about 3900 kernel instructions, every one emulated on kvm_pvm (~0.5-1 us): 28-35 s by the host's load; it passes with a longer timeout"
why[sprofile]="it profiles by overflows of PAPI_TOT_CYC: under the tsc source each is a PMI, a signal and PAPI's disable and refresh, milliseconds of emulated kernel on kvm_pvm, and it passes in 35-50 s; under the step source too, since a cycles overflow has the host timer there as well (design.md 4.4)"
why[overflow_allcounters]="as sprofile: overflows of PAPI_TOT_CYC cost milliseconds of emulated kernel each, counted as cycles too; about 31 s, it passes with a longer timeout"
why[fork_overflow]="it fails when a second's overflows fall below a tenth of the second before's: a second in which a loaded host hardly ran the vCPU has hardly any, since steal is left out of cycles"
why[clockres_pthreads]="4 threads read PAPI_get_virt_cyc and PAPI_get_virt_usec 10^6 times each, and PAPI reads them with syscall(SYS_clock_gettime, CLOCK_THREAD_CPUTIME_ID) itself, not through the vDSO: 8 million kernel entries, at 23 us or more each on kvm_pvm"
why[overflow3_pthreads]="4 threads run do_stuff() forever beside the one it measures, all on one vCPU: every round of do_stuff() makes 20,000 read() calls (tens of us each on kvm_pvm), the measured thread gets a fifth of the vCPU, and its three rounds take more than the timeout"
why[papi_tot_cyc]="PAPI_TOT_CYC counts user mode only, and the guest kernel's mode clock (design.md 4.6) leaves the least trip into the kernel and back out of user time, but not the rest of a slower one: the trip back after sleep(1) finds a cold host and takes 100-400 us more on kvm_pvm, so PAPI_start's and PAPI_stop's calls around it come to 250,000 cycles or more, against the test's limit of 100,000"
why[papi_ref_cyc]="it compares PAPI_REF_CYC with the wall-clock time of its loops and allows 10%: reference cycles are the TSC while the vCPU runs, host steal left out (design.md 4.1), and on a loaded host the two part by more than that (too high in one run, too low in another); it passed on an idle host in an earlier session"
for t in zero_attach multiattach multiattach2 attach2 attach3 attach_validate; do
	why[$t]="attaching needs ptrace (ENOSYS in the guest), and perf_event_open of another process's events is EACCES: the guest's events count their own thread (design.md, perf_event_open)"
done
why[attach_cpu]="it counts its own thread on CPU 1, which a one-vCPU guest does not have (EINVAL, as Linux says); with more vCPUs a thread's events on one CPU are EOPNOTSUPP: the guest's events count their own thread wherever it runs (design.md, perf_event_open)"
for t in attach_cpu_validate attach_cpu_sys_validate; do
	why[$t]="it needs 2 CPUs; on more vCPUs a thread's events on one CPU are EOPNOTSUPP and a CPU's events (PAPI_GRN_SYS: pid -1) EACCES: the guest's events count their own thread wherever it runs (design.md, perf_event_open)"
done
declare -A guest_result

printf '| test | lists | native (this host) | guest (`--source %s`, %s vCPU) |\n' \
	"$source" "$cpus" >"$tmp/table"
printf '|------|-------|--------|-------|\n' >>"$tmp/table"
declare -A count
for name in "${order[@]}"; do
	prog=$dir/$name
	t=${own_tmo[$name]:-$tmo}
	if [ -n "${excluded[$name]+set}" ]; then
		nat="EXCLUDED"$'\t'"run_tests_exclude.txt: ${excluded[$name]}"
		gst=$nat
	elif [ ! -x "$prog" ]; then
		nat=$'NOT BUILT\t' gst=$'NOT BUILT\t'
	else
		(cd "$tmp" && timeout -k 5 "$t" "$prog") \
			>"$tmp/n.out" 2>"$tmp/n.err" </dev/null
		nat=$(classify "$tmp/n.out" "$tmp/n.err" $?)
		# A dynamically linked test (shlib) finds ld.so and the
		# libraries in the host's /, shared read-only.
		share=()
		readelf -l "$prog" 2>/dev/null | grep -q 'INTERP' &&
			share=(--dir /:/:ro)
		(cd "$tmp" && "$vmm" run --source "$source" --cpus "$cpus" \
			--mem "$mem" --timeout "$t" "${helpers[@]}" \
			"${share[@]}" "${extra[@]}" -- "$prog") \
			>"$tmp/g.out" 2>"$tmp/g.err" </dev/null
		gst=$(classify "$tmp/g.out" "$tmp/g.err" $?)
	fi
	r=${gst%%$'\t'*}
	guest_result[$name]=$r
	count[$r]=$((${count[$r]:-0} + 1))
	printf '%-28s %-10s %s\n' "$name" "$r" "${gst#*$'\t'}" >&2
	printf '| `%s` | %s | %s | %s |\n' "$name" "${lists[$name]}" \
		"$(printf '%s' "${nat%%$'\t'*}: ${nat#*$'\t'}" | sed 's/: $//' | cell)" \
		"$(printf '%s' "$r: ${gst#*$'\t'}" | sed 's/: $//' | cell)" >>"$tmp/table"
done

summary=""
for r in PASSED "PASSED with WARNING" SKIPPED FAILED TIMEOUT KILLED "NO RESULT" \
	EXCLUDED "NOT BUILT"; do
	[ -n "${count[$r]:-}" ] && summary+="${summary:+, }${count[$r]} $r"
done
echo "guest (--source $source, $cpus vCPU): $summary" >&2
# PAPI's own default make target (ctests/Makefile): serial, forkexec_tests,
# overflow_tests, profile_tests and multiplex_and_pthreads.
ndef=0 npass=0
for name in "${order[@]}"; do
	case ", ${lists[$name]}, " in
	*", SERIAL, "*|*", FORKEXEC, "*|*", OVERFLOW, "*|*", PROFILE, "*|\
	*", MPX, "*|*", MPXPTHR, "*|*", PTHREADS, "*) ;;
	*) continue ;;
	esac
	case ${guest_result[$name]:-} in
	EXCLUDED) continue ;;
	PASSED*) npass=$((npass + 1)) ;;
	esac
	ndef=$((ndef + 1))
done

for p in check_events showevtinfo; do
	if [ -x "$dir/$p" ]; then
		"$vmm" run --source "$source" --cpus "$cpus" --timeout "$tmo" \
			-- "$dir/$p" >"$tmp/$p.out" 2>&1 </dev/null
	else
		echo "(not built: libpfm4-dev ships no $p.c)" >"$tmp/$p.out"
	fi
done

{
	echo '<!-- papi-suite: generated by scripts/papi-suite.sh; do not edit -->'
	echo '## PAPI'"'"'s test suite and libpfm4'
	echo
	echo "Generated by \`scripts/papi-suite.sh\` at commit" \
		"$(git -C "$top" rev-parse --short HEAD) ($(date -u +%Y-%m-%d)):"
	echo "Debian's PAPI $(dpkg-query -W -f='${Version}' libpapi-dev 2>/dev/null)"
	echo "ctests and validation tests (\`papi-examples\`, unchanged, linked"
	echo "statically against \`libpapi.a\` and \`libpfm.a\` by"
	echo "\`tests/papi/meson.build\`; \`shlib\` dynamically, run with the host's"
	echo "/ shared read-only), every test of their makefiles' lists,"
	own=""
	for n in "${!own_tmo[@]}"; do own+="${own:+, }$n ${own_tmo[$n]} s"; done
	echo "natively on this host and in the guest (\`--mem $mem\`), ${tmo} s"
	echo "each${own:+ ($own)}.  A result is the test's own word and the line that says why:"
	echo "for FAILED the line \`test_fail()\` prints, for SKIPPED the last"
	echo "one the test printed before it (\`test_skip()\` prints no reason, so"
	echo "this is sometimes only the test's title).  EXCLUDED: named in PAPI's"
	echo "\`run_tests_exclude.txt\`, which its own \`run_tests.sh\` leaves out."
	echo
	echo "**Guest, \`--source $source\`, $cpus vCPU: $summary.**"
	echo "Of the $ndef ctests of PAPI's default make target (\`serial\`,"
	echo "\`forkexec_tests\`, \`overflow_tests\`, \`profile_tests\`,"
	echo "\`multiplex_and_pthreads\`), $npass passed in the guest" \
		"($((ndef ? 100 * npass / ndef : 0))%)."
	echo
	# Why most tests skip: PAPI maps its presets (PAPI_TOT_CYC, ...)
	# through a table keyed by libpfm4's name for the core PMU.
	pmu=$(sed -n '/^Detected PMU models/,/^Total events/p' \
		"$tmp/check_events.out" | grep -v -e ix86arch -e perf |
		sed -n 's/.*\[[0-9]*, \([a-z0-9_]*\), .*/\1/p' | tail -1)
	if [ -n "$pmu" ]; then
		# No grep -q: under pipefail, strings killed by SIGPIPE when
		# grep stops early would make the test false.
		if strings -a "$(cc -print-file-name=libpapi.a)" |
			grep -x "CPU,$pmu" >/dev/null; then
			echo "libpfm4 takes the guest's CPUID for its \`$pmu\` PMU.  PAPI"
			echo "takes its presets from the guest kernel's table of what the"
			echo "virtual PMU counts (\`/proc/perfvisor/papi_events.csv\`,"
			echo "named by \`PAPI_CSV_EVENT_FILE\`, docs/design.md 4.1), not"
			echo "from its own \`$pmu\` table, whose cache, floating-point and"
			echo "branch-kind presets no source counts: PAPI_query_event says"
			echo "no to those, and a test that needs one skips or fails by its"
			echo "own rule.  A raw event the PMU lacks opens and never counts,"
			echo "as on Linux (time running 0).  The step source counts instructions and"
			echo "branches exactly with cycles (the TSC while the thread runs),"
			echo "from the VMM's code cache (docs/design.md 4.4): PAPI's tests"
			echo "of 10^7-10^8 instructions take seconds."
		else
			echo "libpfm4 takes the guest's CPUID for its \`$pmu\` PMU, and"
			echo "this PAPI's preset table (\`papi_events.csv\`, built into"
			echo "\`libpapi.a\`) has no \`CPU,$pmu\` section: no preset exists"
			echo "(\`PAPI_TOT_CYC\`: \"Event does not exist\"), and every test"
			echo "that adds one skips or fails, in the guest as on such a host."
		fi
		echo
	fi
	cat "$tmp/table"
	echo
	reasons=
	for name in "${order[@]}"; do
		case ${guest_result[$name]:-} in ''|PASSED|EXCLUDED) continue ;; esac
		[ -n "${why[$name]:-}" ] || continue
		reasons+="- \`$name\` (${guest_result[$name]}): ${why[$name]}."$'\n'
	done
	if [ -n "$reasons" ]; then
		echo "Why these do not pass in the guest (\`scripts/papi-suite.sh\`"
		echo "keeps the reasons, found by reading the test and the guest kernel):"
		echo
		printf '%s\n' "$reasons"
	fi
	echo "### libpfm4's examples in the guest"
	echo
	echo "\`check_events\` (no argument: the PMUs libpfm4 detects from the"
	echo "guest's CPUID, then the generic events):"
	echo
	echo '```'
	sed -n '/^Detected PMU models/,$p' "$tmp/check_events.out" | head -40
	echo '```'
	echo
	echo "\`showevtinfo\` ($(wc -l <"$tmp/showevtinfo.out") lines): the PMUs it"
	echo "detects and the first events of the first one:"
	echo
	echo '```'
	sed -n '/^Detected PMU models/,$p' "$tmp/showevtinfo.out" | head -40
	echo '```'
	echo '<!-- papi-suite end -->'
} >"$tmp/block"

if [ "$write" = 0 ]; then
	cat "$tmp/block"
	exit 0
fi
doc=$top/docs/compatibility.md
python3 - "$doc" "$tmp/block" <<'PYEOF'
import re, sys
doc, block = sys.argv[1], open(sys.argv[2]).read().rstrip('\n')
text = open(doc).read()
pat = re.compile(r'<!-- papi-suite: .*?<!-- papi-suite end -->', re.S)
text = pat.sub(lambda m: block, text) if pat.search(text) else \
	text.rstrip('\n') + '\n\n' + block
open(doc, 'w').write(text.rstrip('\n') + '\n')
PYEOF
echo "docs/compatibility.md: PAPI table written" >&2
