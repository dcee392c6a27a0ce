// SPDX-License-Identifier: MIT
/*
 * Under the step source by blocks, each indirect call from the code cache
 * is a block trap into the VMM, and cycles:u counted each trap's round
 * trip as the program's: python3 -c pass under QEMU's emulated KVM took
 * 484,000 of them and they were all of its user cycles.  The VMM now
 * leaves out 7/8 of the least trip to a block trap and its own time for
 * each (docs/design.md 4.5), so over a loop of indirect calls cycles:u is
 * well under the TSC ticks the loop took: under 0.9 of them (before: 0.95
 * to 1).  Run with --source step, which opens instructions:u beside it.
 */
#include <stdint.h>
#include <stdio.h>
#include <x86intrin.h>

#include "guest_check.h"
#include "guest_cycles.h"

#define CALLS	2000

static int inc(int x) { return x + 1; }
static int dec(int x) { return x - 1; }
static int (*volatile table[2])(int) = { inc, dec };

int main(void)
{
	int c = cycles_open(PV_PERF_ATTR_EXCLUDE_KERNEL);
	int n = hw_event_open(PV_PERF_COUNT_HW_INSTRUCTIONS,
			      PV_PERF_ATTR_EXCLUDE_KERNEL);
	uint64_t c0, c1, t0, t1, i0, i1;
	int x = 0;

	CHECK(c >= 0 && n >= 0, "perf_event_open: %d %d", c, n);
	/* Once through, so that the loop's blocks are in the cache. */
	for (int i = 0; i < CALLS / 10; i++)
		x = table[i & 1](x);
	i0 = cycles_read(n);
	c0 = cycles_read(c);
	t0 = __rdtsc();
	for (int i = 0; i < CALLS; i++)
		x = table[i & 1](x);
	t1 = __rdtsc();
	c1 = cycles_read(c);
	i1 = cycles_read(n);
	fprintf(stderr, "blocktrap: %d indirect calls, %llu instructions:u, "
		"%llu cycles:u in %llu TSC ticks\n", CALLS,
		(unsigned long long)(i1 - i0), (unsigned long long)(c1 - c0),
		(unsigned long long)(t1 - t0));
	CHECK(i1 - i0 >= 3ull * CALLS, "%llu instructions for %d calls",
	      (unsigned long long)(i1 - i0), CALLS);
	CHECK(10 * (c1 - c0) < 9 * (t1 - t0),
	      "cycles:u %llu of %llu TSC ticks: block traps counted",
	      (unsigned long long)(c1 - c0), (unsigned long long)(t1 - t0));
	printf("blocktrap: ok (%d failed)\n", failures + (x != 0));
	return failures != 0 || x != 0;
}
