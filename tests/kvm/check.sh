#!/usr/bin/env bash
# Run a command (normally `vmm run ...`) and check what it did.
#
#   check.sh [-s STATUS] [-o STDOUT_TEXT] [-n NATIVE_PROG] [-e STDERR_REGEX]...
#            [-E STDERR_LINES] [-t SECONDS] -- COMMAND...
#
# -n runs NATIVE_PROG natively with the arguments that follow it in COMMAND,
# argv[0] set to its basename and an empty environment, and requires
# identical stdout.  Run through kvm-test.sh, which holds the skip rule.
set -uo pipefail

want_status=0 want_out= have_out=0 native= err_lines= tmo=120
err_re=()
while getopts "s:o:n:e:E:t:" opt; do
	case $opt in
	s) want_status=$OPTARG ;;
	o) want_out=$OPTARG; have_out=1 ;;
	n) native=$OPTARG ;;
	e) err_re+=("$OPTARG") ;;
	E) err_lines=$OPTARG ;;
	t) tmo=$OPTARG ;;
	*) echo "check.sh: bad option" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ "${1:-}" = "--" ] && shift

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
timeout -k 5 "$tmo" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
status=$?
fail=0
say() { echo "FAIL: $*"; fail=1; }

[ "$status" = "$want_status" ] || say "exit status $status, want $want_status"
if [ "$have_out" = 1 ]; then
	printf '%b' "$want_out" >"$tmp/want"
	cmp -s "$tmp/want" "$tmp/out" || { say "stdout differs:"; diff "$tmp/want" "$tmp/out" | head -20; }
fi
if [ -n "$native" ]; then
	# The program's arguments: what follows the program in COMMAND.
	args=("$@")
	idx=${#args[@]}
	for i in "${!args[@]}"; do
		[ "$(basename -- "${args[$i]}")" = "$(basename -- "$native")" ] && idx=$((i + 1))
	done
	pargs=("${args[@]:$idx}")
	# perl-base is essential in Debian: exec with argv[0] set, empty env.
	env -i perl -e 'exec {shift @ARGV} @ARGV or exit 127' \
		"$native" "$(basename -- "$native")" "${pargs[@]}" \
		>"$tmp/native" 2>/dev/null </dev/null
	cmp -s "$tmp/native" "$tmp/out" || { say "stdout differs from native:"; diff "$tmp/native" "$tmp/out" | head -20; }
fi
for re in "${err_re[@]}"; do
	grep -Eq -- "$re" "$tmp/err" || say "stderr does not match /$re/"
done
if [ -n "$err_lines" ]; then
	n=$(wc -l <"$tmp/err")
	[ "$n" = "$err_lines" ] || say "stderr has $n lines, want $err_lines"
fi
if [ $fail = 1 ]; then
	echo "--- command: $*"
	echo "--- stdout:"; head -c 4000 "$tmp/out"
	echo "--- stderr:"; head -c 4000 "$tmp/err"
	exit 1
fi
echo "ok: status $status"
exit 0
