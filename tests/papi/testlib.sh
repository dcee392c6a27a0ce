#!/usr/bin/env bash
# PAPI's test helpers (testlib, the validation tests' kernels, the
# profiling utilities) from the installed papi-examples, compiled as they
# come into one static archive every test links against:
#   testlib.sh OUTPUT.a EXAMPLES_DIR CC [CC ARGS...]
# Foreign code, built with -w: its warnings are not ours to fix.
set -euo pipefail
out=$1 ex=$2
shift 2
dir=$(mktemp -d "$(dirname "$out")/testlib.XXXXXX")
trap 'rm -rf "$dir"' EXIT
srcs=(testlib/test_utils.c testlib/do_loops.c testlib/clockcore.c
      ctests/prof_utils.c)
for f in "$ex"/validation_tests/*.c; do
	case $(basename "$f") in
	papi_*|*_validation*|memleak_check.c) ;;	# tests, not helpers
	*) srcs+=("validation_tests/$(basename "$f")") ;;
	esac
done
for s in "${srcs[@]}"; do
	"$@" -c -w -O1 -g -pthread -I"$ex/testlib" -I"$ex/validation_tests" \
		-I"$ex/ctests" "$ex/$s" -o "$dir/$(basename "$s" .c).o"
done
rm -f "$out"
ar rcs "$out" "$dir"/*.o
