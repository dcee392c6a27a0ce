// SPDX-License-Identifier: MIT
/*
 * saverestore: i-mode for every counter (Nikolaev & Back, VEE 2011).  At
 * each guest thread switch the outgoing thread's counter values are saved
 * into its page and the incoming thread's loaded, in one batched
 * hypercall; at each vCPU deschedule the counters stop.  A thread's count
 * is then simply the counter value while it runs.  Simple and exact, but
 * one exit per context switch.
 */
#include "../internal.h"

static void saverestore_deschedule(struct pmu_vcpu *v)
{
	pmu_vcpu_pause(v);
}

static void saverestore_resume(struct pmu_vcpu *v)
{
	pmu_vcpu_unpause(v);
}

static int saverestore_thread_out(struct pmu_vcpu *v,
				  struct pv_vpmu_thread_page *t)
{
	pmu_thread_save(v, t, false);
	return 0;
}

static int saverestore_thread_in(struct pmu_vcpu *v,
				 struct pv_vpmu_thread_page *t)
{
	int ret = pmu_vcpu_adopt_config(v, t);

	if (ret)
		return ret;
	pmu_thread_restore(v, t, false);
	return 0;
}

const struct pmu_policy_ops pmu_policy_saverestore = {
	.name = "saverestore",
	.id = PV_VPMU_POLICY_SAVERESTORE,
	.vcpu_deschedule = saverestore_deschedule,
	.vcpu_resume = saverestore_resume,
	.thread_out = saverestore_thread_out,
	.thread_in = saverestore_thread_in,
	/* One batched hypercall whenever a side counts: values travel. */
	.switch_rule = PV_SWITCH_VALID | PV_SWITCH_EXIT_ACTIVE |
		       PV_SWITCH_LOADED,
};
