/* SPDX-License-Identifier: MIT */
/*
 * The oracles' common start: PROG under ptrace, as the guest runs its
 * first process (empty environment, argv[0] optionally renamed).
 */
#ifndef TESTS_PTRACE_START_H
#define TESTS_PTRACE_START_H

#include <sys/types.h>

/*
 * Fork and exec argv[0] with argv (argv[0] replaced by argv0 unless
 * NULL), stopped at its execve, with ptrace options opts set.  Returns
 * its pid; or -1 when it did not start, with *status the exit status to
 * give (the child said why).  Errors of the tracer itself print
 * "WHO: ..." and exit 125.
 */
pid_t ptrace_start(const char *who, char **argv, const char *argv0,
		   long opts, int *status);

#endif
