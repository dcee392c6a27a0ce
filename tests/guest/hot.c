// SPDX-License-Identifier: MIT
/*
 * Spends a known share of its instructions in hot(): the profile test
 * checks that `vmm record` + `vmm report` name hot first with its real
 * share (callgrind on the same binary is the reference).  `hot N threads`
 * runs cold() N times in a second thread named coldthr and hot() in the
 * main thread until coldthr is done, so that a profile must tell the
 * threads apart.  Both run for the same time whatever each loop costs or
 * however the host shares its CPUs (under QEMU a vCPU can be starved).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

__attribute__((noinline)) static unsigned long hot(unsigned long x, long n)
{
	for (long i = 0; i < n; i++)
		x = x * 2862933555777941757ul + 3037000493ul;
	return x;
}

__attribute__((noinline)) static unsigned long cold(unsigned long x, long n)
{
	for (long i = 0; i < n; i++)
		x ^= x >> 7, x ^= x << 9;
	return x;
}

struct cold_arg {
	long n;
	atomic_bool done;
};

static void *cold_thread(void *arg)
{
	struct cold_arg *a = arg;
	unsigned long y;

	prctl(PR_SET_NAME, "coldthr");
	y = cold(2, a->n);
	atomic_store(&a->done, true);
	return (void *)y;
}

static int two_threads(long n)
{
	struct cold_arg a = { .n = n };
	pthread_t t;
	void *y;
	unsigned long x = 1;

	if (pthread_create(&t, NULL, cold_thread, &a))
		return 1;
	/* Chunks of about a millisecond: hot stops soon after cold. */
	do
		x = hot(x, 1000000);
	while (!atomic_load(&a.done));
	pthread_join(t, &y);
	printf("%lu %lu\n", x, (unsigned long)y);
	return 0;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	unsigned long x = 1;

	if (argc > 2 && !strcmp(argv[2], "threads"))
		return two_threads(n);
	for (int r = 0; r < 10; r++) {
		x = hot(x, n * 8 / 10);
		x = cold(x, n * 2 / 10);
	}
	printf("%lu\n", x);
	return 0;
}
