// SPDX-License-Identifier: MIT
/*
 * A probe, not a test: how steady is the TSC time of the same loop, run
 * again and again, on the machine this runs on?  PAPI's `first`, `reset`
 * and `reset_multiplex` expect cycles of identical loops to agree within
 * 10-20%; any cycles that are time (the tsc and step sources') can agree
 * no better than this.  Run it natively, inside QEMU's emulated machine
 * (scripts/qemu-svm.sh -- build-dev/tests/guest/loop_tsc) and in the guest
 * there (... -- build-dev/vmm/vmm run -- build-dev/tests/guest/loop_tsc);
 * docs/compatibility.md has the numbers.
 *
 * The loop is PAPI's do_flops() shape: c += a * b from volatile operands,
 * 20 million times (about 100 million instructions).
 */
#include <stdint.h>
#include <stdio.h>
#include <x86intrin.h>

#define RUNS	8
#define ITERS	20000000

static volatile double a = 0.5, b = 2.2;

static double flops(int n)
{
	double c = 0.11;

	for (int i = 0; i < n; i++)
		c += a * b;
	return c;
}

int main(void)
{
	uint64_t t[RUNS], lo = UINT64_MAX, hi = 0;
	double sink = 0;

	for (int r = 0; r < RUNS; r++) {
		uint64_t t0 = __rdtsc();

		sink += flops(ITERS);
		t[r] = __rdtsc() - t0;
		if (t[r] < lo)
			lo = t[r];
		if (t[r] > hi)
			hi = t[r];
	}
	printf("loop_tsc: Mticks per run:");
	for (int r = 0; r < RUNS; r++)
		printf(" %llu", (unsigned long long)(t[r] / 1000000));
	printf("\nloop_tsc: run 1 / run 2 %.2f, slowest / fastest %.2f\n",
	       (double)t[0] / t[1], (double)hi / lo);
	return sink < 0;
}
