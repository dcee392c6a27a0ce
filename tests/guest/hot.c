// SPDX-License-Identifier: MIT
/*
 * Spends a known share of its instructions in hot(): the profile test
 * checks that `vmm record` + `vmm report` name hot first with its real
 * share (callgrind on the same binary is the reference).
 */
#include <stdio.h>
#include <stdlib.h>

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

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	unsigned long x = 1;

	for (int r = 0; r < 10; r++) {
		x = hot(x, n * 8 / 10);
		x = cold(x, n * 2 / 10);
	}
	printf("%lu\n", x);
	return 0;
}
