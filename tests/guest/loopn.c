// SPDX-License-Identifier: MIT
/*
 * N iterations of a little work with calls, branches and a rep string
 * instruction; for comparing step-source counts of two N against the
 * ptrace oracle (start-up differences cancel in the difference).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long mix(unsigned long x)
{
	for (int i = 0; i < 8; i++)
		x = (x & 1) ? x * 3 + 1 : x / 2;
	return x;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	static char a[64], b[64];
	unsigned long s = 7;

	for (int i = 0; i < n; i++) {
		s += mix(s + i);
		memset(a, i, sizeof(a));
		memcpy(b, a, sizeof(b));
		s += b[i % 64];
	}
	printf("%lu\n", s);
	return 0;
}
