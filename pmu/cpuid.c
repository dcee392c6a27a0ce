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
		/* An event the source counts in user mode only (the step
		 * source's branch-misses) is there too. */
		if (!s->ops->can_count(s, pmu_arch_event(i), PMU_MODE_ALL) &&
		    !s->ops->can_count(s, pmu_arch_event(i), PMU_MODE_USR))
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

/* CPUID.1:EAX's family, the extended one added as Linux does. */
static uint32_t cpuid1_family(uint32_t eax)
{
	uint32_t family = (eax >> 8) & 0xf;

	return family == 0xf ? family + ((eax >> 20) & 0xff) : family;
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
/*
 * An AMD guest keeps the host's family up to Zen 4 (family 0x19), whose
 * core events have the encodings this PMU counts on every Zen.  Debian
 * 12's libpfm4 (4.13) knows no later family: on a Zen 5 host (family
 * 0x1a) it finds no PMU and PAPI disables its perf_event component.  So a
 * newer AMD guest is a Zen 3 (family 0x19, model 1), which PAPI 7.0's own
 * preset table knows too (it has no Zen 4), where user code's CPUID
 * reads this table (user_traps); where it does not, the kernel must say
 * what user code sees, and programs are told the model instead
 * (pmu_cpuid_pfm_must_force()).
 */
void pmu_cpuid_fixup_leaf1(struct pmu_cpuid_regs *r, bool intel,
			   bool user_traps)
{
	uint32_t family = cpuid1_family(r->eax);

	r->ecx |= PV_CPUID1_ECX_PDCM;
	if (intel)
		r->eax = (r->eax & 0xf) | PV_CPUID1_EAX_PMU_MODEL;
	else if (family > 0x19 && user_traps)
		r->eax = (r->eax & 0xf) | PV_CPUID1_EAX_AMD_PMU_MODEL;
}

/*
 * On kvm_pvm a user-mode CPUID runs natively on an AMD host (no CPUID
 * faulting: tests/guest/cpuid.c prints what user code sees), so
 * leaf 1 above reaches only the guest kernel, and libpfm4 in a program
 * finds a Zen 5 it has no tables for.  Such a program must be told the
 * model (LIBPFM_FORCE_PMU); eax and ebx are what user code's CPUID leaves
 * 1 and 0 return.
 */
bool pmu_cpuid_pfm_must_force(uint32_t leaf0_ebx, uint32_t leaf1_eax)
{
	return leaf0_ebx == 0x68747541 &&			/* "Auth" */
	       cpuid1_family(leaf1_eax) > 0x19;
}
