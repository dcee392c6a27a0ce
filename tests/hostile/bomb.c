// SPDX-License-Identifier: MIT
/*
 * Fork and thread bombs, bounded by the kernel's task limit: create until
 * the kernel refuses, which must be a clean EAGAIN (or ENOMEM when memory
 * runs out first), then release everything and check that all of it is
 * reaped and that creating works again.  Prints one verdict line.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_TRY	4096

static int gate[2];

static void wait_gate(void)
{
	char c;

	/* Blocks until the parent closes the write end. */
	while (read(gate[0], &c, 1) < 0 && errno == EINTR)
		;
}

static int fork_bomb(void)
{
	int n = 0, err = 0, reaped = 0, status;
	pid_t pid;

	if (pipe(gate))
		return 1;
	while (n < MAX_TRY) {
		pid = fork();
		if (pid == 0) {
			close(gate[1]);
			wait_gate();
			_exit(7);
		}
		if (pid < 0) {
			err = errno;
			break;
		}
		n++;
	}
	close(gate[1]);
	while ((pid = wait(&status)) > 0)
		if (WIFEXITED(status) && WEXITSTATUS(status) == 7)
			reaped++;
	/* Stdout names the errno only: the count depends on --mem. */
	printf("fork bomb: refused with %s; %s reaped\n",
	       err == EAGAIN ? "EAGAIN" : err == ENOMEM ? "ENOMEM" :
	       err ? strerror(err) : "nothing",
	       reaped == n ? "all" : "not all");
	fprintf(stderr, "fork bomb: %d children\n", n);
	/* The limit is a limit, not a leak: forking works again. */
	pid = fork();
	if (pid == 0)
		_exit(0);
	if (pid < 0 || waitpid(pid, &status, 0) != pid || status) {
		printf("fork bomb: cannot fork afterwards\n");
		return 1;
	}
	return !(n >= 4 && (err == EAGAIN || err == ENOMEM) && reaped == n);
}

static void *thread_fn(void *arg)
{
	(void)arg;
	wait_gate();
	return (void *)7;
}

static int thread_bomb(void)
{
	static pthread_t th[MAX_TRY];
	pthread_attr_t attr;
	int n = 0, err = 0, joined = 0;

	if (pipe(gate))
		return 1;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 16384);
	while (n < MAX_TRY) {
		err = pthread_create(&th[n], &attr, thread_fn, NULL);
		if (err)
			break;
		n++;
	}
	close(gate[1]);
	for (int i = 0; i < n; i++) {
		void *ret;

		if (!pthread_join(th[i], &ret) && ret == (void *)7)
			joined++;
	}
	printf("thread bomb: refused with %s; %s joined\n",
	       err == EAGAIN ? "EAGAIN" : err == ENOMEM ? "ENOMEM" :
	       err ? strerror(err) : "nothing",
	       joined == n ? "all" : "not all");
	fprintf(stderr, "thread bomb: %d threads\n", n);
	close(gate[0]);
	if (pipe(gate))
		return 1;
	close(gate[1]);
	if (pthread_create(&th[0], &attr, thread_fn, NULL) ||
	    pthread_join(th[0], NULL)) {
		printf("thread bomb: cannot create a thread afterwards\n");
		return 1;
	}
	return !(n >= 16 && (err == EAGAIN || err == ENOMEM) && joined == n);
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "fork";

	if (!strcmp(how, "fork"))
		return fork_bomb();
	if (!strcmp(how, "thread"))
		return thread_bomb();
	fprintf(stderr, "bomb: unknown mode %s\n", how);
	return 2;
}
