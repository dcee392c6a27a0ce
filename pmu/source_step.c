// SPDX-License-Identifier: MIT
/*
 * step: exact retired instructions and branches.  The guest kernel single-
 * steps user code while step.enable is set and counts into the per-vCPU
 * page; Phys(t) is the sum of the step.count[] slots the counter's mode
 * selects.  Overflow is exact: arm() turns the counter's overflow point
 * into a step.deadline[] at which the guest kernel exits (PV_HC_PMU_POLL)
 * before retiring another user instruction.  CPL0 code is emulated on
 * these hosts, so KVM_GUESTDBG_SINGLESTEP steps it (and only it): the VMM
 * counts kernel instructions itself when a counter has the OS bit.
 *
 * cycles and ref-cycles, so that instructions and cycles can be counted
 * together: the TSC while the vCPU runs (user and kernel alike, as the
 * tsc source counts them, host steal dropped), less the cost of the
 * traps themselves, Perfctr-Xen's overhead compensation.  Each single
 * step and each block trap (step.traps) costs one, so Phys(t) = TSC -
 * cost * traps, where cost is 7/8 of the least TSC per trap this vCPU
 * has been seen to take over a run of at least STEP_CAL_MIN traps between
 * two VMM entries, host steal left out: the average trap varies by a few
 * percent with the host's load, and a cost above the traps of a later
 * stretch would leave its count standing still (it never goes back).  Guest code reads it directly
 * (PV_VPMU_READ_TSC_STEP).  What remains is user time,
 * kernel time, and each trap's time above that least cost
 * (docs/design.md, "Cycles under the step source").
 */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"

/* Steps between two VMM entries that measure the cost of a step, and the
 * calibration exits' spacing before and after the first measurement. */
#define STEP_CAL_MIN		256
#define STEP_CAL_FIRST		256
#define STEP_CAL_EVERY		65536

struct step_vcpu {
	/* Kernel slots, counted by the VMM; mirrored into the page. */
	uint64_t count[PV_STEP_SLOTS];
	uint64_t deadline[PMU_NR];	/* in Phys units of the counter */
	uint8_t mask[PMU_NR];
	bool armed[PMU_NR];
	/* cycles: TSC per step (0 until measured), and the TSC and user
	 * step count at the last entry */
	uint64_t cost;
	uint64_t cal_tsc, cal_steps, cal_steal_ns;
	bool cal_valid;
	uint64_t cal_deadline;		/* user steps: exit to measure */
	/* cycles counters: the TSC of the host timer's next look */
	uint64_t timer[PMU_NR];
	bool timed[PMU_NR];
};

struct step_source {
	struct pmu_source base;
	struct step_vcpu *vcpus;
};

static struct step_source *to_step(struct pmu_source *s)
{
	return (struct step_source *)s;
}

static uint8_t step_mask(uint16_t event, unsigned int mode)
{
	uint8_t usr, os;

	if (event == PV_EVENT_INSTRUCTIONS) {
		usr = 1u << PV_STEP_USER_INSNS;
		os = 1u << PV_STEP_KERNEL_INSNS;
	} else if (event == PV_EVENT_BRANCHES) {
		usr = 1u << PV_STEP_USER_BRANCHES;
		os = 1u << PV_STEP_KERNEL_BRANCHES;
	} else if (event == PV_EVENT_BRANCH_MISSES) {
		/* The predictor is modeled where blocks run: user mode. */
		return mode == PMU_MODE_USR ? 1u << PV_STEP_USER_BMISS : 0;
	} else {
		return 0;
	}
	return (mode & PMU_MODE_USR ? usr : 0) | (mode & PMU_MODE_OS ? os : 0);
}

static bool step_is_cycles(uint16_t event)
{
	return event == PV_EVENT_CYCLES || event == PV_EVENT_REF_CYCLES;
}

static bool step_slot_is_kernel(unsigned int slot)
{
	return slot == PV_STEP_KERNEL_INSNS || slot == PV_STEP_KERNEL_BRANCHES;
}

/*
 * User slots come from the page the guest kernel counts into; kernel slots
 * from the VMM's own tally, which exists before (and without) a page.
 */
static uint64_t step_sum(const struct pmu_vcpu *v, const struct step_vcpu *sv,
			 uint8_t mask)
{
	uint64_t sum = 0;

	for (unsigned int i = 0; i < PV_STEP_SLOTS; i++) {
		if (!(mask & (1u << i)))
			continue;
		if (step_slot_is_kernel(i))
			sum += sv->count[i];
		else if (v->page)
			sum += __atomic_load_n(&v->page->step.count[i],
					       __ATOMIC_RELAXED);
	}
	return sum;
}

static int step_create(struct pmu *pmu, struct pmu_source **out,
		       const char **err)
{
	struct step_source *st = calloc(1, sizeof(*st));

	if (st)
		st->vcpus = calloc(pmu->nr_vcpus, sizeof(*st->vcpus));
	if (!st || !st->vcpus) {
		free(st);
		*err = "out of memory";
		return -ENOMEM;
	}
	for (unsigned int i = 0; i < pmu->nr_vcpus; i++)
		st->vcpus[i].cal_deadline = PV_STEP_NO_DEADLINE;
	st->base.ops = &pmu_source_step;
	st->base.pmu = pmu;
	*out = &st->base;
	return 0;
}

static void step_destroy(struct pmu_source *s)
{
	free(to_step(s)->vcpus);
	free(s);
}

static bool step_can_count(const struct pmu_source *s, uint16_t event,
			   unsigned int mode)
{
	/* Mispredictions are the VMM's model of a predictor, run at block
	 * ends: not by single steps alone. */
	if (event == PV_EVENT_BRANCH_MISSES && !s->pmu->step_blocks)
		return false;
	return step_mask(event, mode) != 0 || step_is_cycles(event);
}

/* The traps taken to count user code: single steps and block traps. */
static uint64_t step_user_steps(const struct pmu_vcpu *v)
{
	return v->page ? __atomic_load_n(&v->page->step.traps,
					 __ATOMIC_RELAXED) : 0;
}

static uint64_t step_cycles(struct pmu_source *s, struct pmu_vcpu *v,
			    unsigned int mode)
{
	const struct step_vcpu *sv = &to_step(s)->vcpus[pmu_vcpu_id(v)];

	return pmu_mode_cycles(v, mode, s->pmu->clock.tsc(s->pmu->clock.arg),
			       sv->cost * step_user_steps(v));
}

static uint64_t step_read(struct pmu_source *s, struct pmu_vcpu *v,
			  uint16_t event, unsigned int mode)
{
	if (step_is_cycles(event))
		return step_cycles(s, v, mode);
	return step_sum(v, &to_step(s)->vcpus[pmu_vcpu_id(v)],
			step_mask(event, mode));
}

static uint8_t step_direct(const struct pmu_source *s, uint16_t event,
			   unsigned int mode, uint8_t *mask)
{
	(void)s;
	if (step_is_cycles(event)) {
		*mask = 1u << PV_STEP_USER_INSNS;
		return pmu_mode_read(mode, PV_VPMU_READ_TSC_STEP);
	}
	*mask = step_mask(event, mode);
	return PV_VPMU_READ_STEP;
}

static uint64_t step_cost(const struct pmu_source *s, const struct pmu_vcpu *v)
{
	return to_step((struct pmu_source *)s)->vcpus[pmu_vcpu_id(v)].cost;
}

/*
 * Only user slots are stepped by the guest; kernel slots change only
 * under the VMM, so a counter's Phys deadline becomes a user-slot
 * deadline by subtracting what the other slots hold now.
 */
static void step_publish_deadlines(struct pmu_vcpu *v, struct step_vcpu *sv)
{
	static const unsigned int user_slots[] = {
		PV_STEP_USER_INSNS, PV_STEP_USER_BRANCHES, PV_STEP_USER_BMISS,
	};
	struct pv_vpmu_vcpu_page *p = v->page;

	if (!p)
		return;
	for (unsigned int s = 0; s < PV_STEP_SLOTS; s++)
		p->step.deadline[s] = PV_STEP_NO_DEADLINE;
	p->step.deadline[PV_STEP_USER_INSNS] = sv->cal_deadline;
	for (unsigned int i = 0; i < PMU_NR; i++) {
		for (unsigned int k = 0; k < 3; k++) {
			unsigned int slot = user_slots[k];
			uint64_t others, dl;

			if (!sv->armed[i] || !(sv->mask[i] & (1u << slot)))
				continue;
			others = step_sum(v, sv, sv->mask[i] & ~(1u << slot));
			dl = sv->deadline[i] - others;
			if (dl < p->step.deadline[slot])
				p->step.deadline[slot] = dl;
		}
	}
}

static void step_arm(struct pmu_source *s, struct pmu_vcpu *v,
		     unsigned int idx, uint16_t event, unsigned int mode,
		     uint64_t deadline)
{
	struct step_vcpu *sv = &to_step(s)->vcpus[pmu_vcpu_id(v)];

	/* A cycles overflow no exit would announce: the host timer's. */
	if (step_is_cycles(event)) {
		sv->timer[idx] = pmu_cycles_timer(s, v, mode, deadline,
						  step_cycles(s, v, mode));
		sv->timed[idx] = true;
		return;
	}
	sv->deadline[idx] = deadline;
	sv->mask[idx] = step_mask(event, mode);
	sv->armed[idx] = true;
	step_publish_deadlines(v, sv);
}

static void step_disarm(struct pmu_source *s, struct pmu_vcpu *v,
			unsigned int idx)
{
	struct step_vcpu *sv = &to_step(s)->vcpus[pmu_vcpu_id(v)];

	sv->armed[idx] = false;
	sv->timed[idx] = false;
	step_publish_deadlines(v, sv);
}

static bool step_timer_deadline(struct pmu_source *s, struct pmu_vcpu *v,
				uint64_t *tsc)
{
	struct step_vcpu *sv = &to_step(s)->vcpus[pmu_vcpu_id(v)];

	return pmu_timer_earliest(sv->timer, sv->timed, tsc);
}

static bool step_kernel_step(struct pmu_source *s, struct pmu_vcpu *v,
			     bool branch)
{
	struct step_vcpu *sv = &to_step(s)->vcpus[pmu_vcpu_id(v)];

	sv->count[PV_STEP_KERNEL_INSNS]++;
	if (branch)
		sv->count[PV_STEP_KERNEL_BRANCHES]++;
	/* libvpmu sums the page's slots itself. */
	if (v->page) {
		v->page->step.count[PV_STEP_KERNEL_INSNS] =
			sv->count[PV_STEP_KERNEL_INSNS];
		v->page->step.count[PV_STEP_KERNEL_BRANCHES] =
			sv->count[PV_STEP_KERNEL_BRANCHES];
	}
	for (unsigned int i = 0; i < PMU_NR; i++) {
		if (sv->armed[i] && step_sum(v, sv, sv->mask[i]) >= sv->deadline[i])
			return true;
	}
	return false;
}

/* Does v count cycles with this source? */
static bool step_cycles_enabled(const struct pmu_source *s,
				const struct pmu_vcpu *v)
{
	for (unsigned int i = 0; i < PMU_NR; i++)
		if (v->ctr[i].enabled && v->ctr[i].src == s &&
		    step_is_cycles(v->ctr[i].event))
			return true;
	return false;
}

/*
 * At each entry: measure the steps since the last one, and take a cheaper
 * step as the new cost.  A counter still running (the raw policy keeps
 * counting through exits) is folded at the old cost and restarted at the
 * new one, so the change does not move it.  While cycles are counted, a
 * calibration exit comes every STEP_CAL_EVERY user steps (the first after
 * STEP_CAL_FIRST): otherwise a thread that never exits is never measured.
 */
static void step_vcpu_enter(struct pmu_source *s, struct pmu_vcpu *v)
{
	struct step_vcpu *sv = &to_step(s)->vcpus[pmu_vcpu_id(v)];
	uint64_t now = s->pmu->clock.tsc(s->pmu->clock.arg);
	uint64_t n = step_user_steps(v), cost = sv->cost, per, ran;
	/* Host preemption is not a step's cost: it is dropped as steal. */
	uint64_t stolen = (uint64_t)((unsigned __int128)(v->steal_ns -
		sv->cal_steal_ns) * s->pmu->tsc_khz / 1000000u);

	ran = now - sv->cal_tsc;
	/* By blocks the cost stays 0 (design.md 4.5): from the VMM's code
	 * cache a trap may stand for millions of natively run instructions,
	 * and a stretch's time tells no trap's cost. */
	if (sv->cal_valid && !s->pmu->step_blocks &&
	    n - sv->cal_steps >= STEP_CAL_MIN &&
	    now > sv->cal_tsc && ran > stolen) {
		per = (ran - stolen) / (n - sv->cal_steps);
		per -= per / 8;
		if (!cost || per < cost)
			cost = per;
		/* The first run was counted uncompensated: drop its steps'
		 * cost now, as steal is dropped (never below a value the
		 * guest may have read at the last entry). */
		for (unsigned int i = 0; !sv->cost && i < PMU_NR; i++) {
			struct pmu_counter *c = &v->ctr[i];
			uint64_t drop = cost * (n - sv->cal_steps);

			if (!c->enabled || c->running || c->src != s ||
			    !step_is_cycles(c->event))
				continue;
			if (drop > c->run_events)
				drop = c->run_events;
			c->run_events -= drop;
			c->sum = (c->sum - drop) & PV_VPMU_MASK;
		}
	}
	sv->cal_tsc = now;
	sv->cal_steps = n;
	sv->cal_steal_ns = v->steal_ns;
	sv->cal_valid = true;
	if (cost != sv->cost) {
		for (unsigned int i = 0; i < PMU_NR; i++)
			if (v->ctr[i].running && v->ctr[i].src == s &&
			    step_is_cycles(v->ctr[i].event))
				pmu_counter_fold(v, i);
		sv->cost = cost;
		for (unsigned int i = 0; i < PMU_NR; i++)
			if (v->ctr[i].running && v->ctr[i].src == s &&
			    step_is_cycles(v->ctr[i].event))
				v->ctr[i].start = step_cycles(s, v,
								   v->ctr[i].mode);
	}
	/* The deadline is in user instructions, which a trap retires one
	 * or more of: the exit comes after at least as many traps.  Not by
	 * blocks: the VMM's code cache runs loops with no trap at all, so a
	 * thread that never exits costs next to nothing to leave unmeasured,
	 * while an exit every STEP_CAL_EVERY instructions would cost more
	 * than the loop (its traps, hypercalls and PMI). */
	sv->cal_deadline = !step_cycles_enabled(s, v) || s->pmu->step_blocks ?
		PV_STEP_NO_DEADLINE :
		(v->page ? v->page->step.count[PV_STEP_USER_INSNS] : 0) +
		(sv->cost ? STEP_CAL_EVERY : STEP_CAL_FIRST);
	step_publish_deadlines(v, sv);
}

const struct pmu_source_ops pmu_source_step = {
	.name = "step",
	.id = PV_VPMU_SOURCE_STEP,
	.flags = PMU_SRC_TIME_CYCLES,
	.create = step_create,
	.destroy = step_destroy,
	.can_count = step_can_count,
	.read = step_read,
	.direct = step_direct,
	.arm = step_arm,
	.disarm = step_disarm,
	.kernel_step = step_kernel_step,
	.vcpu_enter = step_vcpu_enter,
	.step_cost = step_cost,
	.timer_deadline = step_timer_deadline,
};
