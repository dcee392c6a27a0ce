// SPDX-License-Identifier: MIT
/*
 * Event names and encodings: the perf-style names of the command line, the
 * architectural events of CPUID leaf 0xA, the fixed counters' events.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

struct event_name {
	const char *name;
	uint16_t event;
};

static const struct event_name event_names[] = {
	{ "cycles", PV_EVENT_CYCLES },
	{ "instructions", PV_EVENT_INSTRUCTIONS },
	{ "ref-cycles", PV_EVENT_REF_CYCLES },
	{ "cache-references", PV_EVENT_LLC_REFS },
	{ "cache-misses", PV_EVENT_LLC_MISSES },
	{ "branches", PV_EVENT_BRANCHES },
	{ "branch-misses", PV_EVENT_BRANCH_MISSES },
	{ "vmexits", PV_EVENT_VMEXITS },
	{ "vmexits.msr", PV_EVENT_VMEXITS_MSR },
	{ "vmexits.io", PV_EVENT_VMEXITS_IO },
	{ "vmexits.mmio", PV_EVENT_VMEXITS_MMIO },
	{ "vmexits.hlt", PV_EVENT_VMEXITS_HLT },
	{ "vmexits.hypercall", PV_EVENT_VMEXITS_HC },
	{ "vmexits.other", PV_EVENT_VMEXITS_OTHER },
	{ "steal", PV_EVENT_STEAL },
	{ "vmm-time", PV_EVENT_VMM_TIME },
	{ "irqs", PV_EVENT_IRQS },
	{ "task-clock", PV_EVENT_TASK_CLOCK },
};

/* In CPUID.0AH:EBX bit order. */
static const uint16_t arch_events[PV_ARCH_EVENTS] = {
	PV_EVENT_CYCLES, PV_EVENT_INSTRUCTIONS, PV_EVENT_REF_CYCLES,
	PV_EVENT_LLC_REFS, PV_EVENT_LLC_MISSES, PV_EVENT_BRANCHES,
	PV_EVENT_BRANCH_MISSES,
};

/* The fixed counters count these, in order (SDM 20.2.2). */
static const uint16_t fixed_events[PV_VPMU_NR_FIXED] = {
	PV_EVENT_INSTRUCTIONS, PV_EVENT_CYCLES, PV_EVENT_REF_CYCLES,
};

int pmu_event_lookup(const char *name, uint16_t *event)
{
	for (size_t i = 0; i < sizeof(event_names) / sizeof(event_names[0]); i++) {
		if (!strcmp(event_names[i].name, name)) {
			*event = event_names[i].event;
			return 0;
		}
	}
	return -ENOENT;
}

const char *pmu_event_name(uint16_t event)
{
	for (size_t i = 0; i < sizeof(event_names) / sizeof(event_names[0]); i++) {
		if (event_names[i].event == event)
			return event_names[i].name;
	}
	return NULL;
}

bool pmu_event_is_virt(uint16_t event)
{
	return (event & 0xff) == PV_EVENT_VIRT_CODE;
}

uint16_t pmu_arch_event(unsigned int bit)
{
	return arch_events[bit];
}

uint16_t pmu_fixed_event(unsigned int j)
{
	return fixed_events[j];
}

/* The active source first, so a test's fake source can shadow anything. */
struct pmu_source *pmu_event_source(struct pmu *pmu, uint16_t event,
				    unsigned int mode)
{
	if (pmu->src->ops->can_count(pmu->src, event, mode))
		return pmu->src;
	if (pmu->virt->ops->can_count(pmu->virt, event, mode))
		return pmu->virt;
	return NULL;
}

bool pmu_event_supported(struct pmu *pmu, uint16_t event, unsigned int mode)
{
	return pmu_event_source(pmu, event, mode) != NULL;
}
