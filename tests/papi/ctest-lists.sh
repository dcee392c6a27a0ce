#!/usr/bin/env bash
# The test lists of PAPI's own makefiles, one "LIST NAME" line per test:
#   ctest-lists.sh EXAMPLES_DIR
# Read from the installed papi-examples (ctests/Makefile's SERIAL,
# FORKEXEC, OVERFLOW, PROFILE, MPX, MPXPTHR, PTHREADS, ...; and
# validation_tests/Makefile's ALL, printed as VALIDATION), so the suite
# follows Debian's version of PAPI rather than a copy kept here.
set -euo pipefail
ex=$1
lists() {	# FILE VAR...: the words of each VAR, continuation lines joined
	local file=$1
	shift
	awk -v want=" $* " '
		{ line = line $0 }
		/\\$/ { sub(/\\$/, " ", line); next }
		{
			if (match(line, /^[A-Z0-9_]+[ \t]*=/)) {
				var = line; sub(/[ \t]*=.*/, "", var)
				val = line; sub(/^[^=]*=/, "", val)
				if (index(want, " " var " ")) {
					n = split(val, w, /[ \t]+/)
					for (i = 1; i <= n; i++)
						if (w[i] != "") print var, w[i]
				}
			}
			line = ""
		}' "$file"
}
lists "$ex/ctests/Makefile" PTHREADS SERIAL FORKEXEC OVERFLOW PROFILE MPX \
	MPXPTHR OMP SMP SHMEM SHARED ATTACH
lists "$ex/validation_tests/Makefile" ALL | sed 's/^ALL /VALIDATION /'
