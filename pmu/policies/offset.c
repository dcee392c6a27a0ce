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

static bool has_imode(const struct pv_vpmu_thread_page *t)
{
	for (unsigned int i = 0; t && i < PMU_NR; i++) {
		if (pmu_thread_counter_interrupts(t, i))
			return true;
	}
	return false;
}

unsigned int pmu_offset_switch_exits(const struct pv_vpmu_vcpu_page *vp,
				     const struct pv_vpmu_thread_page *out,
				     const struct pv_vpmu_thread_page *in)
{
	if (has_imode(out) || has_imode(in))
		return 1;
	if (in && pmu_thread_active(in) && in->config_id != vp->config_id)
		return 1;
	return 0;
}

/* What the guest kernel does at a switch without exit. */
void pmu_offset_guest_switch(const struct pv_vpmu_vcpu_page *vp,
			     struct pv_vpmu_thread_page *out,
			     struct pv_vpmu_thread_page *in, uint64_t tsc)
{
	for (unsigned int i = 0; i < PMU_NR; i++) {
		uint64_t phys_star = pmu_guest_phys_star(vp, i, tsc);

		if (out && counts_offset(out, i))
			out->ctr[i].sum += pv_vpmu_delta(phys_star,
							out->ctr[i].start);
		if (in && counts_offset(in, i))
			in->ctr[i].start = phys_star;
	}
}

const struct pmu_policy_ops pmu_policy_offset = {
	.name = "offset",
	.id = PV_VPMU_POLICY_OFFSET,
	.summary = "a-mode: per-thread offsets, no exit between equal configs",
	.vcpu_deschedule = offset_deschedule,
	.vcpu_resume = offset_resume,
	.thread_out = pmu_offset_thread_out,
	.thread_in = pmu_offset_thread_in,
	.switch_exits = pmu_offset_switch_exits,
	.guest_switch = pmu_offset_guest_switch,
};
