// SPDX-License-Identifier: MIT
/*
 * The guest's side of the ABI, computed from the shared pages alone: what
 * the unit tests check the VMM side against.  It runs the guest's own code
 * (uapi/vpmu_guest.h, also compiled by the guest kernel and libvpmu), so
 * a test of the model is a test of the guest.  Nothing here may look at
 * struct pmu_vcpu except for the page pointer and statistics.
 */
#include "internal.h"
#include "vpmu_guest.h"

uint64_t pmu_guest_phys_star(const struct pv_vpmu_vcpu_page *vp,
			     unsigned int idx, uint64_t tsc)
{
	return pv_vpmu_phys_star(vp, idx, tsc);
}

uint64_t pmu_guest_read(const struct pv_vpmu_vcpu_page *vp,
			const struct pv_vpmu_thread_page *t, unsigned int idx,
			uint64_t tsc)
{
	uint64_t val;
	uint32_t ts;

	do {
		ts = pv_seq_read_begin(&t->seq);
	} while (!pv_vpmu_read_try(t, ts, vp, idx, tsc, &val));
	return val;
}

unsigned int pmu_guest_switch_exits(const struct pv_vpmu_vcpu_page *vp,
				    const struct pv_vpmu_thread_page *out,
				    const struct pv_vpmu_thread_page *in)
{
	return pv_vpmu_switch_exits(vp, pv_vpmu_thread_masks(out), in,
				    pv_vpmu_thread_masks(in));
}

enum pv_switch_step
pmu_guest_switch_step(struct pv_vpmu_vcpu_page *vp,
		      const struct pv_vpmu_thread_page *out,
		      const struct pv_vpmu_thread_page *in,
		      const struct pv_steal_record *steal)
{
	return pv_vpmu_switch_step(vp, pv_vpmu_thread_masks(out), in,
				   pv_vpmu_thread_masks(in), steal);
}

unsigned int pmu_guest_thread_switch(struct pmu_vcpu *v,
				     struct pv_vpmu_thread_page *out,
				     struct pv_vpmu_thread_page *in,
				     uint64_t tsc)
{
	struct pv_vpmu_masks om = pv_vpmu_thread_masks(out);
	struct pv_vpmu_masks im = pv_vpmu_thread_masks(in);

	/* Without its page the guest cannot do anything by itself. */
	if (!v->page)
		return 1;
	/*
	 * The guest kernel's decision.  No KVM steal record here: the model's
	 * steal reaches the counters through pmu_vcpu_steal() at the exits
	 * its caller makes, so the steal exit (PV_SWITCH_STEP_POLL) is never
	 * taken; pmu_guest_switch_step() tests it with a record.
	 */
	if (pv_vpmu_switch_step(v->page, om, in, im, NULL) ==
	    PV_SWITCH_STEP_SWITCH)
		return 1;
	v->stats.guest_switches++;
	pv_vpmu_switch_local(v->page, out, om, in, im, v->page->vcpu_id, tsc);
	return 0;
}
