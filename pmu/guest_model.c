// SPDX-License-Identifier: MIT
/*
 * The guest's side of the ABI, computed from the shared pages alone: the
 * reference for what the guest kernel and the user library do, and what
 * the unit tests check the VMM side against.  Nothing here may look at
 * struct pmu_vcpu except for the page pointer and statistics.
 */
#include "internal.h"

static uint32_t seq_read_begin(const uint32_t *seq)
{
	uint32_t s;

	/* An odd count means a writer is in the middle of an update. */
	while ((s = __atomic_load_n(seq, __ATOMIC_ACQUIRE)) & 1)
		;
	return s;
}

static bool seq_read_retry(const uint32_t *seq, uint32_t s)
{
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(seq, __ATOMIC_RELAXED) != s;
}

static uint64_t guest_phys(const struct pv_vpmu_counter *c,
			   const struct pv_vpmu_step *step, uint64_t tsc)
{
	uint64_t sum = 0;

	switch (c->read) {
	case PV_VPMU_READ_TSC:
		return tsc;
	case PV_VPMU_READ_STEP:
		for (unsigned int i = 0; i < PV_STEP_SLOTS; i++) {
			if (c->step_mask & (1u << i))
				sum += step->count[i];
		}
		return sum;
	default:
		/* No live part: the published sum is the value. */
		return c->start;
	}
}

static uint64_t phys_star_unlocked(const struct pv_vpmu_vcpu_page *vp,
				   unsigned int idx, uint64_t tsc)
{
	const struct pv_vpmu_counter *c = &vp->ctr[idx];

	if (!(c->flags & PV_VPMU_CTR_RUNNING))
		return c->sum;
	return (c->sum + guest_phys(c, &vp->step, tsc) - c->start) &
		PV_VPMU_MASK;
}

uint64_t pmu_guest_phys_star(const struct pv_vpmu_vcpu_page *vp,
			     unsigned int idx, uint64_t tsc)
{
	uint64_t val;
	uint32_t s;

	do {
		s = seq_read_begin(&vp->seq);
		val = phys_star_unlocked(vp, idx, tsc);
	} while (seq_read_retry(&vp->seq, s));
	return val;
}

uint64_t pmu_guest_read(const struct pv_vpmu_vcpu_page *vp,
			const struct pv_vpmu_thread_page *t, unsigned int idx,
			uint64_t tsc)
{
	uint64_t val;
	uint32_t ts, vs;

	do {
		ts = seq_read_begin(&t->seq);
		vs = seq_read_begin(&vp->seq);
		val = t->ctr[idx].sum +
			((phys_star_unlocked(vp, idx, tsc) - t->ctr[idx].start) &
			 PV_VPMU_MASK);
	} while (seq_read_retry(&vp->seq, vs) || seq_read_retry(&t->seq, ts));
	return val;
}

unsigned int pmu_guest_thread_switch(struct pmu_vcpu *v,
				     const struct pmu_policy_ops *pol,
				     struct pv_vpmu_thread_page *out,
				     struct pv_vpmu_thread_page *in,
				     uint64_t tsc)
{
	unsigned int exits;

	/* Without its page the guest cannot do anything by itself. */
	if (!v->page)
		return 1;
	exits = pol->switch_exits(v->page, out, in);
	if (exits)
		return exits;
	v->stats.guest_switches++;
	if (pol->guest_switch) {
		if (out)
			pmu_thread_write_begin(out);
		if (in)
			pmu_thread_write_begin(in);
		pol->guest_switch(v->page, out, in, tsc);
		if (in) {
			in->smp_id = v->page->vcpu_id;
			pmu_thread_write_end(in);
		}
		if (out)
			pmu_thread_write_end(out);
	} else if (in) {
		pmu_thread_write_begin(in);
		in->smp_id = v->page->vcpu_id;
		pmu_thread_write_end(in);
	}
	return 0;
}
