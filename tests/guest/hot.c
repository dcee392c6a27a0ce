// SPDX-License-Identifier: MIT
/*
 * Spends a known share of its instructions in hot(): the profile test
 * checks that `vmm record` + `vmm report` name hot first with its real
 * share (callgrind on the same binary is the reference).  `hot N threads`
 * runs hot() in the main thread and cold() in a second one named coldthr,
 * so that a profile must tell the threads apart.
 */
#include <pthread.h>
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

static void *cold_thread(void *arg)
{
	long n = *(long *)arg;

	prctl(PR_SET_NAME, "coldthr");
	return (void *)cold(2, n);
}

static int two_threads(long n)
{
	pthread_t t;
	void *y;
	unsigned long x;

	if (pthread_create(&t, NULL, cold_thread, &n))
		return 1;
	x = hot(1, n);
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
