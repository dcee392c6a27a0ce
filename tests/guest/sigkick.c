// SPDX-License-Identifier: MIT
/*
 * A signal reaches a thread that runs on another vCPU and only makes
 * system calls the kernel serves without its full return path (getpid,
 * gettid: entry.S's leaf path) or none at all: the sender must kick that
 * CPU.  Without the kick, the spinning thread never enters the kernel's
 * return_to_user() on a tickless vCPU, and this program hangs.
 *
 *   sigkick getpid|spin
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t got, running;
static int use_getpid;

static void on_usr1(int sig)
{
	(void)sig;
	got = 1;
}

static void *spinner(void *p)
{
	(void)p;
	running = 1;
	while (!got)
		if (use_getpid)
			syscall(SYS_getpid);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	use_getpid = argc > 1 && !strcmp(argv[1], "getpid");
	signal(SIGUSR1, on_usr1);
	pthread_create(&t, NULL, spinner, NULL);
	while (!running)
		usleep(1000);
	/* Busy, with no sleep of our own: once no task waits on a deadline,
	 * the spinner's vCPU turns its tick off at the next one, and from
	 * then on nothing but a kick brings it into the kernel. */
	for (time_t end = time(NULL) + 1; time(NULL) <= end;)
		;
	pthread_kill(t, SIGUSR1);
	pthread_join(t, NULL);
	printf("signal taken by the %s loop\n", use_getpid ? "getpid" : "spin");
	return 0;
}
