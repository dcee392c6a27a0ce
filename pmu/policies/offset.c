// SPDX-License-Identifier: MIT
/*
 * offset: the paper's a-mode (Nikolaev & Back, VEE 2011).  Counters are
 * never saved or restored for counting; each thread keeps Sum_thread and
 * Start*_thread and its count is Sum_thread + (Phys* - Start*_thread).
 * The vCPU's Phys* stops while the vCPU is out of guest mode, so neither
 * VMM time nor host preemption is counted.  A switch between threads with
 * the same configuration is done by the guest kernel alone (no exit);
 * counters that interrupt (i-mode) are saved and restored, which needs the
 * batched hypercall.
 */
#include "../internal.h"

static void offset_deschedule(struct pmu_vcpu *v)
{
	pmu_vcpu_pause(v);
}

static void offset_resume(struct pmu_vcpu *v)
{
	pmu_vcpu_unpause(v);
}

static bool counts_offset(const struct pv_vpmu_thread_page *t,
			  unsigned int i)
{
	return pmu_thread_counter_enabled(t, i) &&
		!pmu_thread_counter_interrupts(t, i);
}

int pmu_offset_thread_out(struct pmu_vcpu *v, struct pv_vpmu_thread_page *t)
{
	for (unsigned int i = 0; i < PMU_NR; i++) {
		if (counts_offset(t, i))
			t->ctr[i].sum += pv_vpmu_delta(pmu_vcpu_counter(v, i),
						      t->ctr[i].start);
	}
	pmu_thread_save(v, t, true);
	return 0;
}

int pmu_offset_thread_in(struct pmu_vcpu *v, struct pv_vpmu_thread_page *t)
{
	int ret = pmu_vcpu_adopt_config(v, t);

	if (ret)
		return ret;
	/*
	 * The vCPU is paused, so this is Phys* as of the hypercall's return:
	 * the hypercall's own cost is not charged to the incoming thread.
	 */
	for (unsigned int i = 0; i < PMU_NR; i++) {
		if (counts_offset(t, i))
			t->ctr[i].start = pmu_vcpu_counter(v, i);
	}
	pmu_thread_restore(v, t, true);
	return 0;
}

const struct pmu_policy_ops pmu_policy_offset = {
	.name = "offset",
	.id = PV_VPMU_POLICY_OFFSET,
	.vcpu_deschedule = offset_deschedule,
	.vcpu_resume = offset_resume,
	.thread_out = pmu_offset_thread_out,
	.thread_in = pmu_offset_thread_in,
	/* The guest alone folds offsets while the configuration stays. */
	.switch_rule = PMU_SWITCH_RULE_OFFSET,
};
