/* SPDX-License-Identifier: MIT */
/*
 * The switch point, inline: sched_yield_counted() folds a counted thread
 * switch without a call, and kpmu_switch() is its one out-of-line
 * instance, for schedule().
 */
#ifndef KERNEL_PMU_SWITCH_H
#define KERNEL_PMU_SWITCH_H

#include "kernel.h"
#include "task.h"
#include "vpmu_guest.h"

/* Zero for a task without a thread page (task_alloc() zeroes tasks). */
static inline struct pv_vpmu_masks task_pmu_masks(const struct task *t)
{
	struct pv_vpmu_masks m = { t->pmu_count_mask, t->pmu_int_mask };

	return m;
}

/*
 * The switch point, by the rule the VMM's policy published in the vCPU
 * page: one batched hypercall, or the switch done here without exit.  The
 * decision is pv_vpmu_switch_step(), which the test model takes too.  On
 * kvm_pvm every instruction here is emulated, at every counted switch.
 */
static __always_inline void kpmu_switch_inline(struct task *prev,
					       struct task *next,
					       struct cpu *c)
{
	struct pv_vpmu_vcpu_page *vp = c->vpage;
	struct pv_vpmu_thread_page *op = prev->tpage, *ip = next->tpage;
	struct pv_vpmu_masks om = task_pmu_masks(prev);
	struct pv_vpmu_masks im = task_pmu_masks(next);
	enum pv_switch_step step;

	/* perf's cpu-migrations, for a thread that asked for them: resumed
	 * on another CPU than it left.  One test on every counted switch. */
	if (unlikely(next->perf_migrations) && next->cpu != c)
		next->nr_migrations++;
	step = pv_vpmu_switch_step(vp, om, ip, im, c->steal);
	if (step == PV_SWITCH_STEP_SWITCH) {
		if (ip) {
			pv_seq_write_begin(&ip->seq);
			ip->smp_id = c->id;
			pv_seq_write_end(&ip->seq);
		}
		/* One batched suspend/resume, like perfctr-xen's. */
		hcall(PV_HC_PMU_SWITCH, op ? V2P(op) : 0, ip ? V2P(ip) : 0, 0);
		return;
	}
	if (step == PV_SWITCH_STEP_POLL)
		hcall(PV_HC_PMU_POLL, 0, 0, 0);
	pv_vpmu_switch_local(vp, op, om, ip, im, c->id, PV_VPMU_TSC_NOW);
}

#endif
