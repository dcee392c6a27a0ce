// SPDX-License-Identifier: MIT
/*
 * Programs that never end, for `vmm run --timeout`: the VMM must stop them
 * with status 124 and still deliver what they printed before spinning.
 * Modes: "user" (a tight loop), "threads" (one spinner per vCPU plus the
 * main thread), "blocked" (every signal blocked, then spin), "syscalls"
 * (spin inside the kernel: an endless stream of cheap system calls),
 * "sleep" (block forever in the kernel: the vCPU halts).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void *spinner(void *arg)
{
	(void)arg;
	for (;;)
		__asm__ volatile("" ::: "memory");
	return NULL;
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "user";
	char line[256];
	int n = 0;

	/* Several lines, partly unflushed by stdio until the write below. */
	for (int i = 0; i < 3; i++)
		n += snprintf(line + n, sizeof(line) - n, "spin %s: line %d\n",
			      how, i);
	if (write(1, line, n) != n)
		return 1;
	if (!strcmp(how, "threads")) {
		pthread_t t;

		for (int i = 0; i < 3; i++)
			pthread_create(&t, NULL, spinner, NULL);
	} else if (!strcmp(how, "blocked")) {
		sigset_t all;

		sigfillset(&all);
		sigprocmask(SIG_BLOCK, &all, NULL);
	} else if (!strcmp(how, "syscalls")) {
		for (;;)
			getppid();
	} else if (!strcmp(how, "sleep")) {
		for (;;)
			pause();
	}
	spinner(NULL);
	return 0;
}
