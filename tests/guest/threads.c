// SPDX-License-Identifier: MIT
/*
 * T threads (argv[1]) each compute a known sum; the main thread joins them
 * and prints results in thread order, so the output is deterministic and
 * identical to a native run whatever the scheduling.  argv[2] = "futex"
 * adds a mutex/condition-variable stress on a shared counter.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXT 64

struct arg {
	int id;
	unsigned long result;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static long shared, turn;
static int nthreads, rounds;

static void *work(void *p)
{
	struct arg *a = p;
	unsigned long x = a->id + 1;

	for (int i = 0; i < 200000 * (a->id % 4 + 1); i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	a->result = x;
	return NULL;
}

/* Threads take turns in id order through one condition variable. */
static void *stress(void *p)
{
	struct arg *a = p;

	for (int r = 0; r < rounds; r++) {
		pthread_mutex_lock(&lock);
		while (turn % nthreads != a->id)
			pthread_cond_wait(&cond, &lock);
		shared += a->id;
		turn++;
		pthread_cond_broadcast(&cond);
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[MAXT];
	struct arg args[MAXT];
	bool futex = argc > 2 && !strcmp(argv[2], "futex");

	nthreads = argc > 1 ? atoi(argv[1]) : 4;
	if (nthreads < 1 || nthreads > MAXT)
		return 2;
	rounds = argc > 3 ? atoi(argv[3]) : 20;
	for (int i = 0; i < nthreads; i++) {
		args[i].id = i;
		if (pthread_create(&th[i], NULL, futex ? stress : work, &args[i])) {
			printf("pthread_create %d failed\n", i);
			return 1;
		}
	}
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	if (futex) {
		long want = (long)rounds * nthreads * (nthreads - 1) / 2;

		printf("futex stress: %d threads x %d rounds: shared=%ld (%s)\n",
		       nthreads, rounds, shared, shared == want ? "ok" : "WRONG");
		return shared != want;
	}
	for (int i = 0; i < nthreads; i++)
		printf("thread %d: %016lx\n", i, args[i].result);
	return 0;
}
