// SPDX-License-Identifier: MIT
/*
 * raw: no virtualization.  The counters run from the first vCPU entry on,
 * through guest thread switches, VM exits and host preemption alike, and a
 * thread reads the counter as it is.  It is the baseline that shows why
 * virtualization is needed: a thread's count includes other threads, the
 * VMM and whatever the host ran instead of the vCPU.
 */
#include "../internal.h"

static void raw_deschedule(struct pmu_vcpu *v)
{
	(void)v;
}

static void raw_resume(struct pmu_vcpu *v)
{
	/* Counting starts at the first entry and then never stops. */
	pmu_vcpu_unpause(v);
}

static int raw_thread_out(struct pmu_vcpu *v, struct pv_vpmu_thread_page *t)
{
	(void)v;
	(void)t;
	return 0;
}

static int raw_thread_in(struct pmu_vcpu *v, struct pv_vpmu_thread_page *t)
{
	/* A thread that changed its configuration gets it; nothing else. */
	int ret = pmu_vcpu_adopt_config(v, t);

	if (ret)
		return ret;
	for (unsigned int i = 0; i < PV_VPMU_CTR_SLOTS; i++) {
		t->ctr[i].sum = 0;
		t->ctr[i].start = 0;
	}
	return 0;
}

const struct pmu_policy_ops pmu_policy_raw = {
	.name = "raw",
	.id = PV_VPMU_POLICY_RAW,
	.vcpu_deschedule = raw_deschedule,
	.vcpu_resume = raw_resume,
	.thread_out = raw_thread_out,
	.thread_in = raw_thread_in,
	/* Counters are never switched: exit only to load a new config. */
	.switch_rule = PV_SWITCH_VALID | PV_SWITCH_EXIT_CONFIG,
};
