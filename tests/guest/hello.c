// SPDX-License-Identifier: MIT
/* The boot test: malloc, qsort and printf from static musl. */
#include <stdio.h>
#include <stdlib.h>

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int n = 1000;
	int *v = malloc(n * sizeof(*v));
	unsigned int seed = 12345;
	long sum = 0;

	if (!v)
		return 2;
	for (int i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		v[i] = (seed >> 8) % 100000;
	}
	qsort(v, n, sizeof(*v), cmp_int);
	for (int i = 0; i < n; i++)
		sum += (long)v[i] * (i + 1);
	printf("hello from perfvisor: argc=%d argv[0]=%s\n", argc, argv[0]);
	for (int i = 1; i < argc; i++)
		printf("arg %d: %s\n", i, argv[i]);
	printf("sorted: min=%d max=%d weighted=%ld\n", v[0], v[n - 1], sum);
	free(v);
	return 0;
}
