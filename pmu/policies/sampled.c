// SPDX-License-Identifier: MIT
/*
 * sampled: the second worked example of docs/policies.md, a policy with
 * guest-side behaviour in one file.  Counts are offset's: the guest
 * kernel folds a-mode offsets at a switch by itself, and the VMM does the
 * same fold when a switch does reach it, with offset's thread hooks.  But
 * every SAMPLED_PERIOD-th counted switch of a vCPU exits anyway, so the
 * VMM sees a sample of the switches at 1/SAMPLED_PERIOD exit per switch:
 * the place for per-switch work a policy cannot afford at every switch
 * (saverestore pays an exit at each).  The guest counts the switches in
 * its per-vCPU state (struct pv_vpmu_guest_cpu) and evaluates the period
 * with the shared switch code; it knows nothing of this policy.
 */
#include "../internal.h"

/* A power of two is not needed; 8 keeps the sample visible in a test. */
#define SAMPLED_PERIOD	8

const struct pmu_policy_ops pmu_policy_sampled = {
	.name = "sampled",
	.id = 17,
	/* Counters stop while the VMM runs, as offset's do. */
	.vcpu_deschedule = pmu_vcpu_pause,
	.vcpu_resume = pmu_vcpu_unpause,
	/* At a sampled switch the VMM folds what the guest would have. */
	.thread_out = pmu_offset_thread_out,
	.thread_in = pmu_offset_thread_in,
	.switch_rule = PMU_SWITCH_RULE_OFFSET | PV_SWITCH_PERIOD(SAMPLED_PERIOD),
};
