// SPDX-License-Identifier: MIT
/*
 * The real guest kernel with slow APs: each AP waits 300 ms before it
 * registers its vCPU page, as a vCPU thread the host does not schedule
 * for a while would.  The first program then calls perf_event_open()
 * while vCPU 1 is still booting; its counter pages must all be valid
 * (they once mapped vCPU 1's page at a bogus address, and a reader that
 * migrated there spun on MMIO reads until the timeout).
 */
#include "boot.h"
#include "kernel.h"
#include "task.h"

#define AP_DELAY_MS	300

void kernel_ap_selftest(u64 cpu_id)
{
	u64 end = rdtsc() + boot_params->tsc_khz * AP_DELAY_MS;

	(void)cpu_id;
	while (rdtsc() < end)
		__builtin_ia32_pause();
}
