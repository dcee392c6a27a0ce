// SPDX-License-Identifier: MIT
/*
 * wallclock: the worked example of docs/policies.md.  a-mode per thread
 * like offset, but the vCPU counters never stop, so a thread is charged
 * everything that happens while the guest scheduler has it on a vCPU:
 * its own events, the VMM's time handling its exits and host preemption.
 * Comparing its counts with offset's shows what virtualization costs a
 * thread.
 *
 * Both halves are here: the VMM's hooks below, and the guest's rule at a
 * thread switch (.switch_rule), which the VMM publishes in every vCPU page
 * and the guest kernel evaluates without knowing this policy.
 */
#include "../internal.h"

static void wallclock_deschedule(struct pmu_vcpu *v)
{
	/* Keep counting: time in the VMM and preemption are the thread's. */
	(void)v;
}

static void wallclock_resume(struct pmu_vcpu *v)
{
	/* Idempotent; starts the counters at the very first entry. */
	pmu_vcpu_unpause(v);
}

const struct pmu_policy_ops pmu_policy_wallclock = {
	.name = "wallclock",
	.id = 16,
	.vcpu_deschedule = wallclock_deschedule,
	.vcpu_resume = wallclock_resume,
	/* Per thread it is offset: same offsets, same exit-free switches. */
	.thread_out = pmu_offset_thread_out,
	.thread_in = pmu_offset_thread_in,
	.switch_rule = PMU_SWITCH_RULE_OFFSET,
};
