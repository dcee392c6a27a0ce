// SPDX-License-Identifier: MIT
/*
 * Signal storms: thousands of signals to self and between threads, while
 * the targets run handlers, make system calls, block and unblock, and
 * nest.  Every signal sent synchronously to self must be handled exactly
 * once, no handler may run with its signal blocked, and the kernel must
 * neither lose the program nor crash.  Prints one verdict line per storm.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS	400

static atomic_int got_usr1, got_usr2, nested, bad_mask;
static volatile int depth;

static void on_usr1(int sig)
{
	sigset_t cur;

	(void)sig;
	got_usr1++;
	sigprocmask(SIG_BLOCK, NULL, &cur);
	if (!sigismember(&cur, SIGUSR1))
		bad_mask++;
	/* Nest: a different signal from inside a handler, synchronously. */
	if (depth++ == 0 && (got_usr1 & 7) == 0)
		raise(SIGUSR2);
	depth--;
}

static void on_usr2(int sig)
{
	(void)sig;
	got_usr2++;
	if (depth)
		nested++;
}

static int self_storm(void)
{
	pid_t pid = getpid();
	int sent2 = 0;

	for (int i = 0; i < ROUNDS; i++) {
		kill(pid, SIGUSR1);
		if (i % 3 == 0) {
			syscall(SYS_tgkill, pid, syscall(SYS_gettid), SIGUSR2);
			sent2++;
		}
	}
	sent2 += ROUNDS / 8;	/* raised by the handler */
	printf("self storm: %s\n",
	       got_usr1 == ROUNDS && got_usr2 == sent2 && nested == ROUNDS / 8
	       && !bad_mask ? "every signal handled once" : "LOST OR EXTRA");
	if (got_usr1 != ROUNDS || got_usr2 != sent2)
		fprintf(stderr, "usr1 %d/%d usr2 %d/%d nested %d\n",
			(int)got_usr1, ROUNDS, (int)got_usr2, sent2,
			(int)nested);
	return got_usr1 == ROUNDS && got_usr2 == sent2 && !bad_mask;
}

static atomic_int stop, worker_tid, worker_calls;

static void *worker(void *arg)
{
	struct timespec ts = { 0, 1000 };

	(void)arg;
	worker_tid = syscall(SYS_gettid);
	while (!stop) {
		/* System calls interrupted and restarted under the storm. */
		nanosleep(&ts, NULL);
		getppid();
		worker_calls++;
	}
	return NULL;
}

/* Another thread takes tgkill()s while it sleeps and makes calls. */
static int thread_storm(void)
{
	pthread_t t;
	int before, sent = 0;

	got_usr2 = 0;
	if (pthread_create(&t, NULL, worker, NULL))
		return 0;
	while (!worker_tid)
		sched_yield();
	before = got_usr2;
	for (int i = 0; i < ROUNDS; i++) {
		if (syscall(SYS_tgkill, getpid(), worker_tid, SIGUSR2) == 0)
			sent++;
		if (i % 64 == 0)
			sched_yield();
	}
	/* Pending signals are delivered when the worker next returns. */
	while (worker_calls < 3)
		sched_yield();
	stop = 1;
	pthread_join(t, NULL);
	printf("thread storm: %s\n", sent == ROUNDS && got_usr2 > before ?
	       "delivered, worker alive" : "FAILED");
	return sent == ROUNDS && got_usr2 > before;
}

/* Blocked, then unblocked: one standard signal stays pending, once. */
static int blocked_storm(void)
{
	sigset_t s;

	got_usr1 = 0;
	sigemptyset(&s);
	sigaddset(&s, SIGUSR1);
	sigprocmask(SIG_BLOCK, &s, NULL);
	for (int i = 0; i < ROUNDS; i++)
		kill(getpid(), SIGUSR1);
	sigprocmask(SIG_UNBLOCK, &s, NULL);
	printf("blocked storm: %s\n", got_usr1 == 1 ?
	       "coalesced into one" : "WRONG COUNT");
	return got_usr1 == 1;
}

int main(void)
{
	struct sigaction sa = { 0 };
	int ok = 1;

	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_usr2;
	sigaction(SIGUSR2, &sa, NULL);
	/* Ignored and default-ignored signals in the storm too. */
	signal(SIGURG, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	for (int i = 0; i < 200; i++) {
		kill(getpid(), SIGURG);
		kill(getpid(), SIGPIPE);
		kill(getpid(), SIGCHLD);
	}
	ok &= self_storm();
	ok &= thread_storm();
	ok &= blocked_storm();
	/* The storm ends with a signal that kills: SIGTERM, status 143. */
	fflush(stdout);
	if (!ok)
		return 1;
	kill(getpid(), SIGTERM);
	return 1;
}
