// SPDX-License-Identifier: MIT
/*
 * i-mode (Nikolaev & Back, VEE 2011, sec. 4): counters that interrupt on
 * overflow.  Their overflow point is armed with the source while they run
 * (exactly, for the step source), an overflow sets IA32_PERF_GLOBAL_STATUS
 * and asks the caller for a PMI, and their values travel with the guest
 * thread that owns them across thread switches.
 */
#include "internal.h"

void pmu_counter_arm(struct pmu_vcpu *v, unsigned int idx)
{
	struct pmu_counter *c = &v->ctr[idx];

	if (!c->running || !c->interrupt || !c->src->ops->arm)
		return;
	/* The counter wraps when Phys has advanced by 2^48 - value. */
	c->src->ops->arm(c->src, v, idx, c->event, c->mode,
			 c->start + ((1ull << PV_VPMU_WIDTH) - c->sum));
	c->armed = true;
}

void pmu_counter_disarm(struct pmu_vcpu *v, unsigned int idx)
{
	struct pmu_counter *c = &v->ctr[idx];

	if (!c->armed)
		return;
	if (c->src->ops->disarm)
		c->src->ops->disarm(c->src, v, idx);
	c->armed = false;
}

void pmu_counter_overflowed(struct pmu_vcpu *v, unsigned int idx, uint64_t n)
{
	const struct pmu_policy_ops *pol = v->pmu->policy;
	bool pmi;

	v->global_status |= pmu_status_bit(idx);
	v->stats.overflows += n;
	pmi = pol->overflow ? pol->overflow(v, idx, n) : v->ctr[idx].interrupt;
	/*
	 * A PMI while LVTPC is masked is lost, as on hardware: the guest's
	 * handler finds the status bit when it loops on GLOBAL_STATUS.
	 */
	if (pmi && !v->lvtpc_masked && !v->pmi_pending) {
		v->pmi_pending = true;
		v->pmi_ip = v->exit_ip;
		v->pmi_kernel = v->exit_kernel;
		/* Folded at the wrap: what it holds came after the overflow. */
		v->pmi_skid = pmu_counter_counts_time(&v->ctr[idx]) ?
			      v->ctr[idx].sum : 0;
	}
	/* The wrap moved the overflow point: arm the next one. */
	if (v->ctr[idx].armed) {
		pmu_counter_disarm(v, idx);
		pmu_counter_arm(v, idx);
	}
}

/*
 * A delivered PMI freezes the counters until the guest acknowledges it, as
 * Intel's Freeze_PerfMon_On_PMI does and Linux's handler does by disabling
 * them all.  Here the way to the handler is an exit and an emulated kernel
 * path, ~40% of a 1 kHz period on kvm_pvm: counted, it was the program's
 * time, the next sample came that much sooner after the return, in the
 * refill of what the exit evicted, and the profile leaned to code that
 * suffers from it (bzip2's compress_block +1 to +5 points).
 */
bool pmu_vcpu_take_pmi(struct pmu_vcpu *v)
{
	if (!v->pmi_pending || v->lvtpc_masked)
		return false;
	v->pmi_pending = false;
	v->lvtpc_masked = true;
	v->stats.pmis++;
	v->frozen = true;
	v->freeze_tsc = v->pmu->clock.tsc(v->pmu->clock.arg);
	v->freeze_steal_ns = v->steal_ns;
	for (unsigned int i = 0; i < PMU_NR; i++)
		pmu_counter_update(v, i);
	/*
	 * Stopped where the overflow was, not at the exit that found it: the
	 * kick's way out of KVM_RUN is the sampler's, as on hardware that
	 * freezes at the overflow.  But only the least skid seen is that:
	 * kvm_pvm holds a kick through emulated kernel code (a page fault's)
	 * until the return to user mode, and that work is the program's, as
	 * on hardware it would count after the handler.  Dropped, memcpy
	 * and memmove, which take bzip2's first-touch faults, lost their
	 * share of its profile.  Nor is a handful of skids a floor: a
	 * first kick under QEMU took 1.7 ms of the program's own run, and
	 * dropped from a counting group leader it left a count of 0.
	 */
	if (v->pmi_skid) {
		if (!v->pmi_skid_least || v->pmi_skid < v->pmi_skid_least)
			v->pmi_skid_least = v->pmi_skid;
		if (v->pmi_skids < PMU_SKID_LEARN)
			v->pmi_skids++;
		if (v->pmi_skids == PMU_SKID_LEARN)
			pmu_vcpu_drop_time(v, v->pmi_skid_least);
		v->pmi_skid = 0;
	}
	return true;
}

/*
 * The guest acknowledged the PMI (GLOBAL_OVF_CTRL, PV_HC_PMU_REARM, or a
 * GLOBAL_CTRL write as after Intel's legacy freeze): counting resumes.
 * Unmasking LVTPC does not end it, as on hardware: a handler may unmask
 * first and acknowledge last.
 */
void pmu_vcpu_thaw(struct pmu_vcpu *v)
{
	if (!v->frozen)
		return;
	v->frozen = false;
	for (unsigned int i = 0; i < PMU_NR; i++)
		pmu_counter_update(v, i);
}

void pmu_vcpu_lvtpc_unmasked(struct pmu_vcpu *v)
{
	v->lvtpc_masked = false;
}

bool pmu_vcpu_timer_deadline(struct pmu_vcpu *v, uint64_t *tsc)
{
	struct pmu_source *s = v->pmu->src;

	return s->ops->timer_deadline && s->ops->timer_deadline(s, v, tsc);
}

/* Status bits that belong to counters which interrupt. */
static bool interrupting_status(const struct pmu_vcpu *v)
{
	for (unsigned int i = 0; i < PMU_NR; i++) {
		if ((v->global_status & pmu_status_bit(i)) &&
		    pmu_counter_interrupts(v, i))
			return true;
	}
	return false;
}

/*
 * Save the counters `t` enabled into t->ctr[].saved, and move their
 * overflow status into t->pending_status: a PMI that is still to come
 * belongs to the outgoing thread, not to whichever thread runs next.
 */
void pmu_thread_save(struct pmu_vcpu *v, struct pv_vpmu_thread_page *t,
		     bool imode_only)
{
	for (unsigned int i = 0; i < PMU_NR; i++) {
		uint64_t bit = pmu_status_bit(i);

		if (!pmu_thread_counter_enabled(t, i) ||
		    (imode_only && !pmu_thread_counter_interrupts(t, i)))
			continue;
		t->ctr[i].saved = pmu_vcpu_counter(v, i);
		t->ctr[i].sum = 0;
		t->ctr[i].start = 0;
		if (v->global_status & bit) {
			t->pending_status |= bit;
			v->global_status &= ~bit;
			v->stats.carried++;
		}
	}
	/* A PMI still to come for the moved bits is not the next thread's. */
	if (v->pmi_pending && !interrupting_status(v))
		v->pmi_pending = false;
}

/*
 * Load t->ctr[].saved into the counters; overflow that happened while the
 * thread was out is raised again now that its owner runs.
 */
void pmu_thread_restore(struct pmu_vcpu *v, struct pv_vpmu_thread_page *t,
			bool imode_only)
{
	for (unsigned int i = 0; i < PMU_NR; i++) {
		uint64_t bit = pmu_status_bit(i);

		if (!pmu_thread_counter_enabled(t, i) ||
		    (imode_only && !pmu_thread_counter_interrupts(t, i)))
			continue;
		pmu_counter_set(v, i, t->ctr[i].saved);
		t->ctr[i].sum = 0;
		t->ctr[i].start = 0;
		if (t->pending_status & bit) {
			t->pending_status &= ~bit;
			v->global_status |= bit;
			v->stats.redelivered++;
			if (pmu_counter_interrupts(v, i) && !v->lvtpc_masked &&
			    !v->pmi_pending) {
				/* Where it overflowed is the thread's past. */
				v->pmi_pending = true;
				v->pmi_skid = 0;
				v->pmi_ip = 0;
				v->pmi_kernel = false;
			}
		}
	}
}
