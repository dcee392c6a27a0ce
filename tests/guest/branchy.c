// SPDX-License-Identifier: MIT
/*
 * branchy N: N rounds of 256 conditional branches whose outcomes are random
 * (xorshift bits, by an asm jcc the compiler cannot make a cmov), a
 * `loop` and a `jrcxz` of known counts, and a qsort of 64 random numbers
 * (libc's own data-dependent branches).  For the step source's modeled
 * predictor (branch-misses:u) against the ptrace oracle: start-up
 * differences cancel in the difference of two N.
 *
 * branchy N US: the same with a SIGALRM every US microseconds, so that
 * kernel entries land everywhere in the code cache's copies, predictor
 * stubs included.  The handler has no conditional branch: the misses
 * must be those of the run without it.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

static uint64_t xorshift(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static int cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

static void on_alarm(int sig)
{
	(void)sig;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;
	long us = argc > 2 ? atol(argv[2]) : 0;
	uint64_t x = 88172645463325252ull, acc = 0;
	static uint32_t v[64];

	if (us > 0) {
		struct sigaction sa = { .sa_handler = on_alarm,
					.sa_flags = SA_RESTART };
		struct timeval tv = { us / 1000000, us % 1000000 };
		struct itimerval it = { tv, tv };

		if (sigaction(SIGALRM, &sa, NULL) ||
		    setitimer(ITIMER_REAL, &it, NULL)) {
			perror("branchy");
			return 1;
		}
	}

	for (int r = 0; r < n; r++) {
		for (int i = 0; i < 256; i++) {
			uint64_t bit = xorshift(&x) & 1;

			__asm__ volatile("test %1, %1\n\t"
					 "jz 1f\n\t"
					 "add $3, %0\n"
					 "1:"
					 : "+r"(acc) : "r"(bit) : "cc");
		}
		/* 37 turns of loop, then jrcxz taken once and not once */
		__asm__ volatile("mov $37, %%ecx\n"
				 "2:\tinc %0\n\t"
				 "loop 2b\n\t"
				 "jrcxz 3f\n\t"
				 "inc %0\n"
				 "3:\tinc %%ecx\n\t"
				 "jrcxz 4f\n\t"
				 "inc %0\n"
				 "4:"
				 : "+r"(acc) : : "rcx", "cc");
		for (int i = 0; i < 64; i++)
			v[i] = (uint32_t)xorshift(&x);
		qsort(v, 64, sizeof(v[0]), cmp);
		acc += v[r & 63];
	}
	printf("%llu\n", (unsigned long long)acc);
	return 0;
}
