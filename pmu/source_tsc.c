// SPDX-License-Identifier: MIT
/*
 * tsc: cycles and ref-cycles from the constant-rate TSC.  Guest TSC equals
 * host TSC here, so guest user code reads Phys(t) with its own rdtsc, the
 * a-mode direct read path.  A counter of one mode (:u or :k) reads the
 * mode clock the guest kernel keeps (pmu_mode_cycles()).  Host preemption is excluded by the pause at
 * every exit plus pmu_vcpu_steal() for preemption inside KVM_RUN.
 * i-mode overflow: the deadline is a TSC value for the VMM's host timer.
 */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"

struct tsc_vcpu {
	uint64_t deadline[PMU_NR];
	bool armed[PMU_NR];
};

struct tsc_source {
	struct pmu_source base;
	struct tsc_vcpu *vcpus;
};

static struct tsc_source *to_tsc(struct pmu_source *s)
{
	return (struct tsc_source *)s;
}

static int tsc_create(struct pmu *pmu, struct pmu_source **out,
		      const char **err)
{
	struct tsc_source *t = calloc(1, sizeof(*t));

	if (t)
		t->vcpus = calloc(pmu->nr_vcpus, sizeof(*t->vcpus));
	if (!t || !t->vcpus) {
		free(t);
		*err = "out of memory";
		return -ENOMEM;
	}
	t->base.ops = &pmu_source_tsc;
	t->base.pmu = pmu;
	*out = &t->base;
	return 0;
}

static void tsc_destroy(struct pmu_source *s)
{
	free(to_tsc(s)->vcpus);
	free(s);
}

static bool tsc_can_count(const struct pmu_source *s, uint16_t event,
			  unsigned int mode)
{
	(void)s;
	(void)mode;
	return event == PV_EVENT_CYCLES || event == PV_EVENT_REF_CYCLES;
}

static uint64_t tsc_read(struct pmu_source *s, struct pmu_vcpu *v,
			 uint16_t event, unsigned int mode)
{
	(void)event;
	return pmu_mode_cycles(v, mode, s->pmu->clock.tsc(s->pmu->clock.arg),
			       0);
}

static uint8_t tsc_direct(const struct pmu_source *s, uint16_t event,
			  unsigned int mode, uint8_t *step_mask)
{
	(void)s;
	(void)event;
	*step_mask = 0;
	return pmu_mode_read(mode, PV_VPMU_READ_TSC);
}

static void tsc_arm(struct pmu_source *s, struct pmu_vcpu *v, unsigned int idx,
		    uint16_t event, unsigned int mode, uint64_t deadline)
{
	struct tsc_vcpu *tv = &to_tsc(s)->vcpus[pmu_vcpu_id(v)];

	tv->deadline[idx] = pmu_cycles_timer(s, v, mode, deadline,
					     tsc_read(s, v, event, mode));
	tv->armed[idx] = true;
}

static void tsc_disarm(struct pmu_source *s, struct pmu_vcpu *v,
		       unsigned int idx)
{
	to_tsc(s)->vcpus[pmu_vcpu_id(v)].armed[idx] = false;
}

static bool tsc_timer_deadline(struct pmu_source *s, struct pmu_vcpu *v,
			       uint64_t *tsc)
{
	struct tsc_vcpu *tv = &to_tsc(s)->vcpus[pmu_vcpu_id(v)];

	return pmu_timer_earliest(tv->deadline, tv->armed, tsc);
}

const struct pmu_source_ops pmu_source_tsc = {
	.name = "tsc",
	.id = PV_VPMU_SOURCE_TSC,
	.flags = PMU_SRC_TIME,
	.create = tsc_create,
	.destroy = tsc_destroy,
	.can_count = tsc_can_count,
	.read = tsc_read,
	.direct = tsc_direct,
	.arm = tsc_arm,
	.disarm = tsc_disarm,
	.timer_deadline = tsc_timer_deadline,
};
