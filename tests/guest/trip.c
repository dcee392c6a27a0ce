// SPDX-License-Identifier: MIT
/*
 * A system call's trip (the host's switches into the guest kernel and
 * back, the code around the mode clock's stamps) is kernel time, not the
 * caller's user cycles (docs/design.md 4.6): around 500 getppid calls,
 * cycles:u gains less than a third of what cycles:k gains, or (where a
 * trip is cheap anyway, as under QEMU's SVM: ~600 user and ~1,300 kernel
 * cycles a call) less than 2,000 a call, in the least of three rounds.
 * Measured inside one run, so start-up's noise (large under QEMU's SVM)
 * is out.
 *
 * The clock's first stretch, from the first counter's open to one
 * getppid and the read, has no trip of the clock's own yet: it takes off
 * the least trip of the boot's first system calls, and so gains less than
 * a third of a call's kernel cycles (without it, a whole trip: more than
 * 300,000 cycles on kvm_pvm, where a call has about 650,000).  One
 * stretch is one sample of the host's load, so this prints both on
 * stderr and tests/kvm/check_trip_first.sh judges three runs.
 */
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guest_check.h"
#include "guest_cycles.h"

#define CALLS	500
#define ROUNDS	3

int main(void)
{
	int u = cycles_open(PV_PERF_ATTR_EXCLUDE_KERNEL), k;
	uint64_t first, u0, k0, du, dk;

	CHECK(u >= 0, "perf_event_open: %d", u);
	syscall(SYS_getppid);
	first = cycles_read(u);
	k = cycles_open(PV_PERF_ATTR_EXCLUDE_USER);
	CHECK(k >= 0, "perf_event_open: %d", k);
	/* Calls enough that the kernel has seen its least trip. */
	for (int i = 0; i < CALLS; i++)
		syscall(SYS_getppid);
	/* The least of a few rounds: a host's preemption that no steal
	 * record shows (QEMU's vCPU thread descheduled) only adds. */
	du = ~0ull, dk = 0;
	for (int r = 0; r < ROUNDS; r++) {
		u0 = cycles_read(u);
		k0 = cycles_read(k);
		for (int i = 0; i < CALLS; i++)
			syscall(SYS_getppid);
		u0 = cycles_read(u) - u0;
		k0 = cycles_read(k) - k0;
		if (u0 < du)
			du = u0, dk = k0;
	}
	CHECK(dk > 0, "no kernel cycles");
	CHECK(du < dk / 3 || du < 2000 * CALLS, "%d calls: %llu user cycles, %llu kernel", CALLS,
	      (unsigned long long)du, (unsigned long long)dk);
	fprintf(stderr, "trip: first stretch %llu user cycles, a call %llu "
		"kernel cycles\n", (unsigned long long)first,
		(unsigned long long)(dk / CALLS));
	if (failures)
		printf("user %llu kernel %llu first %llu\n",
		       (unsigned long long)du, (unsigned long long)dk,
		       (unsigned long long)first);
	printf("trip: ok (%d failed)\n", failures);
	return failures != 0;
}
