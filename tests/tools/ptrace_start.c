// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptrace_start.h"

static void fail(const char *who, const char *what)
{
	fprintf(stderr, "%s: %s: %s\n", who, what, strerror(errno));
	exit(125);
}

pid_t ptrace_start(const char *who, char **argv, const char *argv0,
		   long opts, int *status)
{
	char *empty_env[] = { NULL };
	const char *path = argv[0];
	pid_t child = fork();

	if (child < 0)
		fail(who, "fork");
	if (child == 0) {
		if (argv0)
			argv[0] = (char *)argv0;
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
			fail(who, "PTRACE_TRACEME");
		execve(path, argv, empty_env);
		fprintf(stderr, "%s: %s: %s\n", who, path, strerror(errno));
		_exit(127);
	}
	/* The execve stop: RIP is the program's first instruction. */
	if (waitpid(child, status, 0) < 0)
		fail(who, "waitpid");
	if (!WIFSTOPPED(*status)) {
		*status = WIFEXITED(*status) ? WEXITSTATUS(*status) : 125;
		return -1;
	}
	if (ptrace(PTRACE_SETOPTIONS, child, NULL, (void *)opts) < 0)
		fail(who, "PTRACE_SETOPTIONS");
	return child;
}
