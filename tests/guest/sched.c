// SPDX-License-Identifier: MIT
/*
 * Scheduler checks.
 *   sched preempt:  two CPU-bound threads that never block each wait to see
 *                   the other make progress: on one vCPU only preemption
 *                   lets both finish.
 *   sched migrate:  three CPU-bound threads on fewer vCPUs record which CPU
 *                   they run on (getcpu); some thread must be seen on two.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static atomic_long progress[3];
static int cpus_seen[3];

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static void *spinner(void *p)
{
	long id = (long)p, other = 1 - id;
	double end = now() + 10;

	/* Busy until the other thread has run too (or 10 s pass). */
	while (atomic_load(&progress[other]) < 1000 && now() < end)
		atomic_fetch_add(&progress[id], 1);
	for (int i = 0; i < 1000; i++)
		atomic_fetch_add(&progress[id], 1);
	return NULL;
}

static void *wanderer(void *p)
{
	long id = (long)p;
	double end = now() + 1.5;

	while (now() < end) {
		unsigned cpu = 0;

		for (volatile int i = 0; i < 200000; i++)
			;
		syscall(SYS_getcpu, &cpu, NULL, NULL);
		if (cpu < 32)
			cpus_seen[id] |= 1 << cpu;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[3];

	if (argc > 1 && !strcmp(argv[1], "preempt")) {
		for (long i = 0; i < 2; i++)
			pthread_create(&t[i], NULL, spinner, (void *)i);
		for (int i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
		printf("preempt: %s\n", progress[0] >= 1000 && progress[1] >= 1000
		       ? "both threads progressed" : "a thread starved");
		return 0;
	}
	for (long i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, wanderer, (void *)i);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 3; i++) {
		if (__builtin_popcount(cpus_seen[i]) > 1) {
			printf("migrate: a thread ran on more than one cpu\n");
			return 0;
		}
	}
	printf("migrate: no thread migrated\n");
	return 0;
}
