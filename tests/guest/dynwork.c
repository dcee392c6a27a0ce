// SPDX-License-Identifier: MIT
/*
 * Work in Debian's shared libc, N rounds of it, for the step source's
 * counts of dynamically linked code against the ptrace oracle
 * (check_oracle.sh): per round a number parsed (strtol), pseudo-random
 * ones (random) and each looked up in a table (bsearch, with a callback
 * into the program).  None of these is an ifunc or calls one (qsort
 * does: memcpy), so libc runs the same code whatever CPUID the guest
 * shows.
 *
 *   dynwork N
 */
#include <stdlib.h>
#include <unistd.h>

static int cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 1, sum = 0;
	int table[64];

	for (int j = 0; j < 64; j++)
		table[j] = 3 * j;
	srandom(1);
	for (long i = 0; i < n; i++) {
		sum += strtol("-123456789", NULL, 10);
		for (int j = 0; j < 8; j++) {
			int key = (int)(random() % 192);

			sum += bsearch(&key, table, 64, sizeof(table[0]),
				       cmp) != NULL;
		}
	}
	/* No stdio: its buffers' alignment changes what memcpy runs. */
	if (write(1, "dynwork: done\n", 14) != 14)
		return 1;
	return sum == 0;
}
