// SPDX-License-Identifier: MIT
/*
 * fake: Phys(t) is whatever the test says.  It claims the architectural
 * events, counts both modes alike, and tells the guest model to read it
 * like a TSC, so a test passes the fake value wherever rdtsc would be.
 */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"

#define FAKE_MAX_EVENTS 16

struct fake_vcpu {
	uint64_t value[FAKE_MAX_EVENTS];
	uint64_t deadline[PMU_NR];
	uint16_t dl_event[PMU_NR];
	bool armed[PMU_NR];
};

struct fake_source {
	struct pmu_source base;
	uint16_t events[FAKE_MAX_EVENTS];
	size_t nr_events;
	unsigned int nr_vcpus;
	struct fake_vcpu *vcpus;
};

static struct fake_source *to_fake(struct pmu_source *s)
{
	return (struct fake_source *)s;
}

static bool is_fake(const struct pmu_source *s)
{
	return s && s->ops == &pmu_source_fake;
}

static int fake_slot(const struct fake_source *f, uint16_t event)
{
	for (size_t i = 0; i < f->nr_events; i++) {
		if (f->events[i] == event)
			return (int)i;
	}
	return -1;
}

static int fake_create(struct pmu *pmu, struct pmu_source **out,
		       const char **err)
{
	static const uint16_t arch[] = {
		PV_EVENT_CYCLES, PV_EVENT_INSTRUCTIONS, PV_EVENT_REF_CYCLES,
		PV_EVENT_LLC_REFS, PV_EVENT_LLC_MISSES, PV_EVENT_BRANCHES,
		PV_EVENT_BRANCH_MISSES,
	};
	struct fake_source *f = calloc(1, sizeof(*f));

	if (f)
		f->vcpus = calloc(pmu->nr_vcpus, sizeof(*f->vcpus));
	if (!f || !f->vcpus) {
		free(f);
		*err = "out of memory";
		return -ENOMEM;
	}
	f->base.ops = &pmu_source_fake;
	f->base.pmu = pmu;
	f->nr_vcpus = pmu->nr_vcpus;
	pmu_fake_set_events(&f->base, arch, sizeof(arch) / sizeof(arch[0]));
	*out = &f->base;
	return 0;
}

static void fake_destroy(struct pmu_source *s)
{
	free(to_fake(s)->vcpus);
	free(s);
}

static bool fake_can_count(const struct pmu_source *s, uint16_t event,
			   unsigned int mode)
{
	(void)mode;
	return fake_slot((const struct fake_source *)s, event) >= 0;
}

static uint64_t fake_read(struct pmu_source *s, struct pmu_vcpu *v,
			  uint16_t event, unsigned int mode)
{
	(void)mode;
	return pmu_fake_get(s, pmu_vcpu_id(v), event);
}

static uint8_t fake_direct(const struct pmu_source *s, uint16_t event,
			   unsigned int mode, uint8_t *step_mask)
{
	(void)s;
	(void)event;
	(void)mode;
	*step_mask = 0;
	return PV_VPMU_READ_TSC;
}

static void fake_arm(struct pmu_source *s, struct pmu_vcpu *v,
		     unsigned int idx, uint16_t event, unsigned int mode,
		     uint64_t deadline)
{
	struct fake_vcpu *fv = &to_fake(s)->vcpus[pmu_vcpu_id(v)];

	(void)mode;
	fv->deadline[idx] = deadline;
	fv->dl_event[idx] = event;
	fv->armed[idx] = true;
}

static void fake_disarm(struct pmu_source *s, struct pmu_vcpu *v,
			unsigned int idx)
{
	to_fake(s)->vcpus[pmu_vcpu_id(v)].armed[idx] = false;
}

void pmu_fake_set_events(struct pmu_source *s, const uint16_t *events,
			 size_t n)
{
	struct fake_source *f = to_fake(s);

	if (!is_fake(s))
		return;
	if (n > FAKE_MAX_EVENTS)
		n = FAKE_MAX_EVENTS;
	for (size_t i = 0; i < n; i++)
		f->events[i] = events[i];
	f->nr_events = n;
}

void pmu_fake_set(struct pmu_source *s, unsigned int vcpu, uint16_t event,
		  uint64_t value)
{
	struct fake_source *f = to_fake(s);
	int slot = is_fake(s) ? fake_slot(f, event) : -1;

	if (slot >= 0 && vcpu < f->nr_vcpus)
		f->vcpus[vcpu].value[slot] = value;
}

uint64_t pmu_fake_get(struct pmu_source *s, unsigned int vcpu,
		      uint16_t event)
{
	struct fake_source *f = to_fake(s);
	int slot = is_fake(s) ? fake_slot(f, event) : -1;

	if (slot < 0 || vcpu >= f->nr_vcpus)
		return 0;
	return f->vcpus[vcpu].value[slot];
}

uint64_t pmu_fake_advance(struct pmu_source *s, unsigned int vcpu,
			  uint16_t event, uint64_t n)
{
	struct fake_source *f = to_fake(s);
	int slot = is_fake(s) ? fake_slot(f, event) : -1;
	struct fake_vcpu *fv;
	uint64_t cur;

	if (slot < 0 || vcpu >= f->nr_vcpus)
		return 0;
	fv = &f->vcpus[vcpu];
	cur = fv->value[slot];
	/* Stop at the nearest armed overflow point, as the step source does. */
	for (unsigned int i = 0; i < PMU_NR; i++) {
		if (fv->armed[i] && fv->dl_event[i] == event &&
		    fv->deadline[i] - cur < n)
			n = fv->deadline[i] - cur;
	}
	fv->value[slot] = cur + n;
	return n;
}

const struct pmu_source_ops pmu_source_fake = {
	.name = "fake",
	.id = PV_VPMU_SOURCE_FAKE,
	.create = fake_create,
	.destroy = fake_destroy,
	.can_count = fake_can_count,
	.read = fake_read,
	.direct = fake_direct,
	.arm = fake_arm,
	.disarm = fake_disarm,
};
