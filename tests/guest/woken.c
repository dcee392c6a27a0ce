// SPDX-License-Identifier: MIT
/*
 * After a halt the host is cold, and the trip back to user mode is slower
 * than the mode clock's least trip: 18,000-40,000 ticks more after a
 * 100 ms sleep on kvm_pvm, which counted as the sleeper's user cycles
 * (PAPI's papi_tot_cyc allows 100,000 around a sleep(1)).  The kernel now
 * starts the clock later by the least trip seen after a halt (docs/
 * design.md 4.6), so around each 200 ms sleep after the first, cycles:u
 * gains no more than two ordinary stretches' noise: the least of five
 * under 10,000 ticks.  Only where a system call costs 20,000 kernel
 * cycles or more (kvm_pvm: ~650,000); under QEMU's SVM, where a trip is a
 * few thousand cycles, this only runs.  The least, because a host's
 * preemption only adds.
 */
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "guest_check.h"
#include "guest_cycles.h"

#define SLEEPS	5
#define CALLS	100

static void nap(void)
{
	struct timespec ts = { 0, 200 * 1000 * 1000 };

	nanosleep(&ts, NULL);
}

int main(void)
{
	int u = cycles_open(PV_PERF_ATTR_EXCLUDE_KERNEL);
	int k = cycles_open(PV_PERF_ATTR_EXCLUDE_USER);
	uint64_t k0, call, first, least = ~0ull, d;

	CHECK(u >= 0 && k >= 0, "perf_event_open: %d %d", u, k);
	k0 = cycles_read(k);
	for (int i = 0; i < CALLS; i++)
		syscall(SYS_getppid);
	call = (cycles_read(k) - k0) / CALLS;
	first = cycles_read(u);
	nap();
	first = cycles_read(u) - first;
	for (int i = 0; i < SLEEPS; i++) {
		d = cycles_read(u);
		nap();
		d = cycles_read(u) - d;
		least = d < least ? d : least;
	}
	fprintf(stderr, "woken: first sleep %llu user cycles, least of %d "
		"after %llu, a call %llu kernel cycles\n",
		(unsigned long long)first, SLEEPS, (unsigned long long)least,
		(unsigned long long)call);
	CHECK(least < 10000 || call < 20000,
	      "least of %d sleeps: %llu user cycles", SLEEPS,
	      (unsigned long long)least);
	printf("woken: ok (%d failed)\n", failures);
	return failures != 0;
}
