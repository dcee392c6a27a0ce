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
 */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"

struct step_vcpu {
	/* Kernel slots, counted by the VMM; mirrored into the page. */
	uint64_t count[PV_STEP_SLOTS];
	uint64_t deadline[PMU_NR];	/* in Phys units of the counter */
	uint8_t mask[PMU_NR];
	bool armed[PMU_NR];
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
	} else {
		return 0;
	}
	return (mode & PMU_MODE_USR ? usr : 0) | (mode & PMU_MODE_OS ? os : 0);
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
	(void)s;
	return step_mask(event, mode) != 0;
}

static uint64_t step_read(struct pmu_source *s, struct pmu_vcpu *v,
			  uint16_t event, unsigned int mode)
{
	return step_sum(v, &to_step(s)->vcpus[pmu_vcpu_id(v)],
			step_mask(event, mode));
}

static uint8_t step_direct(const struct pmu_source *s, uint16_t event,
			   unsigned int mode, uint8_t *mask)
{
	(void)s;
	*mask = step_mask(event, mode);
	return PV_VPMU_READ_STEP;
}

/*
 * Only user slots are stepped by the guest; kernel slots change only
 * under the VMM, so a counter's Phys deadline becomes a user-slot
 * deadline by subtracting what the other slots hold now.
 */
static void step_publish_deadlines(struct pmu_vcpu *v, struct step_vcpu *sv)
{
	static const unsigned int user_slots[] = {
		PV_STEP_USER_INSNS, PV_STEP_USER_BRANCHES,
	};
	struct pv_vpmu_vcpu_page *p = v->page;

	if (!p)
		return;
	for (unsigned int s = 0; s < PV_STEP_SLOTS; s++)
		p->step.deadline[s] = PV_STEP_NO_DEADLINE;
	for (unsigned int i = 0; i < PMU_NR; i++) {
		for (unsigned int k = 0; k < 2; k++) {
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
	step_publish_deadlines(v, sv);
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

const struct pmu_source_ops pmu_source_step = {
	.name = "step",
	.id = PV_VPMU_SOURCE_STEP,
	.create = step_create,
	.destroy = step_destroy,
	.can_count = step_can_count,
	.read = step_read,
	.direct = step_direct,
	.arm = step_arm,
	.disarm = step_disarm,
	.kernel_step = step_kernel_step,
};
