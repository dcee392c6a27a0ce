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
 * Tools pick a PMU's event tables by the CPU model: libpfm4 by family and
 * model, PAPI its presets by libpfm4's name for that PMU.  The guest's PMU
 * is the architectural one (leaf 0xA), and the host's model may be one
 * PAPI 7 has no presets for (Ice Lake client: none at all), or none
 * (family 6 model 0: libpfm4 finds only its generic ix86arch, which PAPI
 * never takes as the default PMU, and disables itself).  So an Intel guest
 * is a Skylake (family 6, model 0x5e): both know it, and its core events
 * (cycles, instructions, branches, reference cycles) have the
 * architectural encodings this PMU counts; its other events open and never
 * count, as Linux's events no counter can take.  The stepping,
 * the feature flags and the brand string stay the host's.
 */
void pmu_cpuid_fixup_leaf1(struct pmu_cpuid_regs *r, bool intel)
{
	r->ecx |= PV_CPUID1_ECX_PDCM;
	if (intel)
		r->eax = (r->eax & 0xf) | PV_CPUID1_EAX_PMU_MODEL;
}
