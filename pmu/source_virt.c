// SPDX-License-Identifier: MIT
/*
 * virtual events: what only a VMM can count (VM exits by reason, time in
 * the VMM, steal time, injected interrupts).  The VMM feeds them through
 * pmu_vcpu_exit(), pmu_vcpu_steal() and pmu_vcpu_count(); they change only
 * while the vCPU is out, so their counters never pause, and the guest
 * reads them from the page as published at its last entry.
 */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"

static int virt_create(struct pmu *pmu, struct pmu_source **out,
		       const char **err)
{
	struct pmu_source *s = calloc(1, sizeof(*s));

	if (!s) {
		*err = "out of memory";
		return -ENOMEM;
	}
	s->ops = &pmu_source_virt;
	s->pmu = pmu;
	*out = s;
	return 0;
}

static void virt_destroy(struct pmu_source *s)
{
	free(s);
}

static bool virt_can_count(const struct pmu_source *s, uint16_t event,
			   unsigned int mode)
{
	unsigned int umask = event >> 8;

	(void)s;
	(void)mode;
	if (!pmu_event_is_virt(event))
		return false;
	return (umask >= PV_EXIT_ALL && umask <= PV_EXIT_OTHER) ||
		event == PV_EVENT_STEAL || event == PV_EVENT_VMM_TIME ||
		event == PV_EVENT_IRQS;
}

static uint64_t virt_read(struct pmu_source *s, struct pmu_vcpu *v,
			  uint16_t event, unsigned int mode)
{
	(void)s;
	(void)mode;
	return v->virt[(event >> 8) % PMU_VIRT_SLOTS];
}

static uint8_t virt_direct(const struct pmu_source *s, uint16_t event,
			   unsigned int mode, uint8_t *step_mask)
{
	(void)s;
	(void)event;
	(void)mode;
	*step_mask = 0;
	return PV_VPMU_READ_NONE;
}

const struct pmu_source_ops pmu_source_virt = {
	.name = "virtual",
	.id = PV_VPMU_SOURCE_NONE,
	.flags = PMU_SRC_OFF_CPU,
	.create = virt_create,
	.destroy = virt_destroy,
	.can_count = virt_can_count,
	.read = virt_read,
	.direct = virt_direct,
};
