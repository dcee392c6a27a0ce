// SPDX-License-Identifier: MIT
/*
 * a-mode bookkeeping per vCPU counter (Nikolaev & Back, VEE 2011, sec. 4):
 *
 *	Phys*(t) = Sum_vcpu + (Phys(t) - Start_vcpu)	while running
 *	Phys*(t) = Sum_vcpu				while stopped
 *
 * Sum_vcpu also absorbs guest writes to the counter, so Phys* is exactly
 * the value of the virtual counter.  Folding (Sum += Phys - Start, Start =
 * Phys) is where a counter crossing 2^48 is noticed, so it is done at
 * every exit; the result is published to the per-vCPU page at every entry.
 */
#include <stddef.h>
#include <string.h>

#include "internal.h"

uint64_t pmu_counter_phys(struct pmu_vcpu *v, unsigned int idx)
{
	const struct pmu_counter *c = &v->ctr[idx];

	return c->src->ops->read(c->src, v, c->event, c->mode);
}

void pmu_counter_fold(struct pmu_vcpu *v, unsigned int idx)
{
	struct pmu_counter *c = &v->ctr[idx];
	uint64_t phys, delta, raw;

	if (!c->running)
		return;
	phys = pmu_counter_phys(v, idx);
	delta = phys - c->start;
	/*
	 * A source that steps back (TSCs of two host CPUs a few cycles
	 * apart) must not look like 2^64 events: keep the old start until
	 * Phys passes it again.
	 */
	if ((int64_t)delta <= 0)
		return;
	c->start = phys;
	c->run_events += delta;
	raw = c->sum + delta;
	c->sum = raw & PV_VPMU_MASK;
	/* sum < 2^48 and delta < 2^64 - 2^48 in practice: no 64-bit carry. */
	if (raw >> PV_VPMU_WIDTH)
		pmu_counter_overflowed(v, idx, raw >> PV_VPMU_WIDTH);
}

/* Start or stop accounting to match the enable bits, the pause and freeze. */
void pmu_counter_update(struct pmu_vcpu *v, unsigned int idx)
{
	struct pmu_counter *c = &v->ctr[idx];
	bool run = c->enabled && ((!v->paused && !v->frozen) ||
				  (c->src->ops->flags & PMU_SRC_OFF_CPU));

	if (run == c->running)
		return;
	if (run) {
		c->start = pmu_counter_phys(v, idx);
		c->run_events = 0;
		c->running = true;
		pmu_counter_arm(v, idx);
	} else {
		pmu_counter_fold(v, idx);
		pmu_counter_disarm(v, idx);
		c->running = false;
	}
}

void pmu_vcpu_fold_all(struct pmu_vcpu *v)
{
	for (unsigned int i = 0; i < PMU_NR; i++)
		pmu_counter_fold(v, i);
}

void pmu_vcpu_pause(struct pmu_vcpu *v)
{
	v->paused = true;
	for (unsigned int i = 0; i < PMU_NR; i++)
		pmu_counter_update(v, i);
}

void pmu_vcpu_unpause(struct pmu_vcpu *v)
{
	v->paused = false;
	for (unsigned int i = 0; i < PMU_NR; i++)
		pmu_counter_update(v, i);
}

uint64_t pmu_vcpu_counter(struct pmu_vcpu *v, unsigned int idx)
{
	const struct pmu_counter *c = &v->ctr[idx];
	uint64_t delta;

	if (!c->running)
		return c->sum;
	delta = pmu_counter_phys(v, idx) - c->start;
	if ((int64_t)delta < 0)
		delta = 0;	/* Phys stepped back: see pmu_counter_fold() */
	return (c->sum + delta) & PV_VPMU_MASK;
}

void pmu_counter_set(struct pmu_vcpu *v, unsigned int idx, uint64_t value)
{
	struct pmu_counter *c = &v->ctr[idx];

	c->sum = value & PV_VPMU_MASK;
	if (c->running) {
		/* Events before the write are gone, as on hardware. */
		c->start = pmu_counter_phys(v, idx);
		c->run_events = 0;
		pmu_counter_disarm(v, idx);
		pmu_counter_arm(v, idx);
	}
}

/* Time-based: host steal time is not the guest's. */
bool pmu_counter_counts_time(const struct pmu_counter *c)
{
	unsigned int f = c->src->ops->flags;

	return (f & PMU_SRC_TIME) ||
		((f & PMU_SRC_TIME_CYCLES) &&
		 (c->event == PV_EVENT_CYCLES || c->event == PV_EVENT_REF_CYCLES));
}

/*
 * Time that was not the guest's, dropped from the time-based counters that
 * are stopped now: host preemption inside KVM_RUN, invisible as an exit
 * (pmu_vcpu_steal()), and a frozen PMI's skid (pmu_vcpu_take_pmi()).  Only
 * paused or frozen counters drop it (a policy that keeps counting across
 * deschedules, like raw, is meant to include steal), never more than they
 * counted since their last start, so a counter never goes backwards past a
 * value the guest already read at its last entry, and never back across a
 * wrap it made, whose overflow was raised.
 */
void pmu_vcpu_drop_time(struct pmu_vcpu *v, uint64_t cycles)
{
	/*
	 * A counter of one mode drops it only if the vCPU was in that mode
	 * at this exit.  The user time the clock counted at the exit's fold
	 * had all steal left out up to the previous exit, so this exit's
	 * news is user time only if the exit came in user mode; in kernel
	 * mode the user time stands still, and kernel time (the rest) has
	 * counted all of it.
	 */
	unsigned int now = pmu_vcpu_mode_now(v);

	for (unsigned int i = 0; i < PMU_NR; i++) {
		struct pmu_counter *c = &v->ctr[i];
		uint64_t drop;

		if (!c->enabled || c->running || !pmu_counter_counts_time(c))
			continue;
		if ((c->mode & PMU_MODE_ALL) != PMU_MODE_ALL && !(c->mode & now))
			continue;
		drop = cycles < c->run_events ? cycles : c->run_events;
		if ((v->global_status & pmu_status_bit(i)) && drop > c->sum)
			drop = c->sum;
		c->run_events -= drop;
		c->sum = (c->sum - drop) & PV_VPMU_MASK;
	}
}

/* The VMM's part of a vCPU page (header to steal_ns, and step.enable). */
static void pmu_vcpu_page_fill(struct pv_vpmu_vcpu_page *p,
			       const struct pmu_vcpu *v)
{
	const struct pmu *pmu = v->pmu;
	uint32_t step = 0, clock = 0;

	p->abi_version = PV_VPMU_ABI_VERSION;
	p->vcpu_id = v->id;
	p->policy_id = pmu->policy->id;
	p->switch_rule = pmu->policy->switch_rule;
	p->source_id = pmu->src->ops->id;
	p->width = PV_VPMU_WIDTH;
	p->nr_counters = PV_VPMU_NR_COUNTERS;
	p->tsc_khz = pmu->tsc_khz;
	p->global_ctrl = v->global_ctrl;
	p->global_status = v->global_status;
	p->config_id = v->config_id;
	p->steal_ns = v->steal_ns;
	for (unsigned int i = 0; i < PMU_NR; i++) {
		const struct pmu_counter *c = &v->ctr[i];
		struct pv_vpmu_counter *pc = &p->ctr[i];
		uint8_t mask = 0, read = PV_VPMU_READ_NONE;

		if (c->enabled) {
			read = c->src->ops->direct ?
				c->src->ops->direct(c->src, c->event, c->mode,
						    &mask) :
				PV_VPMU_READ_TRAP;
		}
		pc->sum = c->sum;
		pc->start = c->start;
		pc->flags = (c->enabled ? PV_VPMU_CTR_ENABLED : 0) |
			(c->running ? PV_VPMU_CTR_RUNNING : 0) |
			(c->interrupt ? PV_VPMU_CTR_INT : 0);
		pc->event = c->event;
		pc->read = read;
		pc->step_mask = read == PV_VPMU_READ_STEP ||
			read == PV_VPMU_READ_TSC_STEP ? mask : 0;
		pc->step_cost = (read == PV_VPMU_READ_TSC_STEP ||
				 read == PV_VPMU_READ_TSC_USER) &&
			c->src->ops->step_cost ?
			c->src->ops->step_cost(c->src, v) : 0;
		/* Enabled, not just running: the clock must run before the
		 * counter's start is taken from it. */
		if (read == PV_VPMU_READ_TSC_USER ||
		    read == PV_VPMU_READ_TSC_KERNEL)
			clock = PV_STEP_MODE_CLOCK;
		/* Bit 1 asks the kernel to decode branches as well.  A
		 * kernel-only counter needs no user stepping.  A PMI's freeze
		 * spans kernel code, and the stepping goes on after it. */
		if ((c->running || (v->frozen && c->enabled)) &&
		    read == PV_VPMU_READ_STEP &&
		    (mask & (1u << PV_STEP_USER_INSNS |
			     1u << PV_STEP_USER_BRANCHES |
			     1u << PV_STEP_USER_BMISS)))
			step |= 1 | ((mask & (1u << PV_STEP_USER_BRANCHES)) ? 2 : 0) |
				((mask & (1u << PV_STEP_USER_BMISS)) ?
				 PV_STEP_PREDICT : 0);
	}
	/* The guest kernel steps only while some counter needs it. */
	if (step && pmu->step_blocks)
		step |= PV_STEP_BLOCKS;
	p->step.enable = step | clock;
}

/*
 * Publish Sum_vcpu/Start_vcpu and the counter state, seqcount-protected,
 * at every entry, but only when something changed: a bump makes every
 * reader in flight retry, and a reader single-stepped by the step source
 * spans several exits.  Bumped at each, it never got through
 * (vpmu-threads-2cpu hung until its timeout when the host was loaded).
 * steal_ns changes at nearly every exit of a preempted vCPU, and its one
 * reader (the kernel's steal check) tolerates a torn value, so it is
 * stored outside the sequence.
 */
void pmu_vcpu_publish(struct pmu_vcpu *v)
{
	const size_t from = offsetof(struct pv_vpmu_vcpu_page, abi_version);
	const size_t to = offsetof(struct pv_vpmu_vcpu_page, steal_ns);
	struct pv_vpmu_vcpu_page *p = v->page, img;

	if (!p)
		return;
	/* Only the VMM's part: this runs at every entry.  The fill writes
	 * all of it, steal_ns and step.enable included. */
	memcpy(&img, p, to + sizeof(p->steal_ns));
	pmu_vcpu_page_fill(&img, v);
	__atomic_store_n(&p->steal_ns, img.steal_ns, __ATOMIC_RELEASE);
	/* Read only by the PMI handler, which a publish never runs under. */
	p->pmi_ip = v->pmi_ip;
	p->pmi_kernel = v->pmi_kernel;
	if (!memcmp((char *)&img + from, (char *)p + from, to - from) &&
	    img.step.enable == p->step.enable)
		return;
	pmu_seq_begin(&p->seq);
	memcpy((char *)p + from, (char *)&img + from, to - from);
	p->step.enable = img.step.enable;
	pmu_seq_end(&p->seq);
}
