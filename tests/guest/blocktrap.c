// SPDX-License-Identifier: MIT
/*
 * Under the step source by blocks, a branch the code cache cannot look up
 * is a block trap into the VMM, and cycles:u counted each trap's round
 * trip as the program's: python3 -c pass under QEMU's emulated KVM took
 * 484,000 of them and they were all of its user cycles.  The VMM now
 * leaves out 7/8 of the least trip to a block trap and its own time for
 * each (docs/design.md 4.5), so over a loop of such branches cycles:u is
 * well under the TSC ticks the loop took: under 0.9 of them (before: 0.95
 * to 1).  The branch is a `ret $0`, which the cache always leaves by an
 * int3 (indirect calls and plain rets find their copies in its tables).
 * Run with --source step, which opens instructions:u beside it.
 */
#include <stdint.h>
#include <stdio.h>
#include <x86intrin.h>

#include "guest_check.h"
#include "guest_cycles.h"

#define CALLS	2000

/* x + 1, returning by `ret $0`. */
int trap_inc(int x);
__asm__(".text\n"
	".globl trap_inc\n"
	"trap_inc:\n"
	"	lea 1(%rdi), %eax\n"
	"	ret $0\n");

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
		x = trap_inc(x);
	i0 = cycles_read(n);
	c0 = cycles_read(c);
	t0 = __rdtsc();
	for (int i = 0; i < CALLS; i++)
		x = trap_inc(x);
	t1 = __rdtsc();
	c1 = cycles_read(c);
	i1 = cycles_read(n);
	fprintf(stderr, "blocktrap: %d calls, %llu instructions:u, "
		"%llu cycles:u in %llu TSC ticks\n", CALLS,
		(unsigned long long)(i1 - i0), (unsigned long long)(c1 - c0),
		(unsigned long long)(t1 - t0));
	CHECK(i1 - i0 >= 3ull * CALLS, "%llu instructions for %d calls",
	      (unsigned long long)(i1 - i0), CALLS);
	CHECK(10 * (c1 - c0) < 9 * (t1 - t0),
	      "cycles:u %llu of %llu TSC ticks: block traps counted",
	      (unsigned long long)(c1 - c0), (unsigned long long)(t1 - t0));
	printf("blocktrap: ok (%d failed)\n",
	       failures + (x != CALLS + CALLS / 10));
	return failures != 0 || x != CALLS + CALLS / 10;
}
