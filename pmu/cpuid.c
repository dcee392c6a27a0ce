// SPDX-License-Identifier: MIT
/*
 * CPUID leaf 0xA, which KVM reports as all zero on this host (no hardware
 * PMU): we build a version-2 PMU whose EBX tells the guest which
 * architectural events the active source cannot count.
 */
#include "internal.h"

void pmu_cpuid_0xa(const struct pmu *pmu, struct pmu_cpuid_regs *r)
{
	const struct pmu_source *s = pmu->src;
	uint32_t unavailable = 0;

	for (unsigned int i = 0; i < PV_ARCH_EVENTS; i++) {
		if (!s->ops->can_count(s, pmu_arch_event(i), PMU_MODE_ALL))
			unavailable |= 1u << i;
	}
	r->eax = PV_VPMU_VERSION | (PV_VPMU_NR_GP << 8) |
		(PV_VPMU_WIDTH << 16) | ((uint32_t)PV_ARCH_EVENTS << 24);
	r->ebx = unavailable;
	r->ecx = 0;
	/* Fixed counters count fixed events: they exist whatever the source
	 * offers, and simply do not count what it cannot. */
	r->edx = PV_VPMU_NR_FIXED | (PV_VPMU_WIDTH << 5);
}

/*
 * The guest's PMU is architectural (leaf 0xA) and nothing more, whatever
 * the host's model: a tool that looked the model up (libpfm4) would offer
 * that model's hundreds of events, which this PMU does not have, and PAPI
 * would take their presets as there to count.  Family 6 model 0 is no
 * model with tables of its own, so libpfm4 finds the architectural PMU
 * (ix86arch) alone, and PAPI maps its presets onto exactly those events.
 * The stepping, the feature flags and the brand string stay the host's.
 */
void pmu_cpuid_fixup_leaf1(struct pmu_cpuid_regs *r, bool intel)
{
	r->ecx |= PV_CPUID1_ECX_PDCM;
	if (intel)
		r->eax = (r->eax & 0xf) | PV_CPUID1_EAX_ARCH_MODEL;
}
