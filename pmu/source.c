// SPDX-License-Identifier: MIT
/*
 * The selectable event sources (--source).  The virtual source is not in
 * the table: every PMU has it in addition to the active one.
 */
#include <string.h>

#include "internal.h"

static const struct pmu_source_ops *const sources[] = {
	&pmu_source_tsc,
	&pmu_source_step,
	&pmu_source_perf,
	&pmu_source_fake,
};

#define NR_SOURCES (sizeof(sources) / sizeof(sources[0]))

const struct pmu_source_ops *pmu_source_lookup(const char *name)
{
	for (size_t i = 0; i < NR_SOURCES; i++) {
		if (!strcmp(sources[i]->name, name))
			return sources[i];
	}
	return NULL;
}

uint64_t pmu_mode_cycles(const struct pmu_vcpu *v, unsigned int mode,
			 uint64_t tsc, uint64_t traps)
{
	uint64_t user;

	if (!v->page)
		return tsc - traps;
	if ((mode & PMU_MODE_ALL) == PMU_MODE_ALL)
		return tsc - traps - v->page->kstep_ticks_user -
		       v->page->kstep_ticks_kernel;
	/* The steal seen so far (at the last exit) is not user time. */
	user = pv_vpmu_user_time(v->page, tsc, v->steal_ns);
	return mode & PMU_MODE_USR ? user - traps - v->page->kstep_ticks_user
				   : tsc - user - v->page->kstep_ticks_kernel;
}

uint8_t pmu_mode_read(unsigned int mode, uint8_t both)
{
	if ((mode & PMU_MODE_ALL) == PMU_MODE_ALL)
		return both;
	return mode & PMU_MODE_USR ? PV_VPMU_READ_TSC_USER :
		PV_VPMU_READ_TSC_KERNEL;
}

uint64_t pmu_cycles_timer(const struct pmu_source *s, const struct pmu_vcpu *v,
			  unsigned int mode, uint64_t deadline, uint64_t count)
{
	/* Up to 2^48 ahead, so not pv_vpmu_delta(), which masks it. */
	uint64_t dist = deadline - count;

	/* Cycles of one mode reach the deadline no sooner than if all the
	 * time from now were theirs, and the step source's never sooner
	 * than the TSC: the timer fires then, and the exit re-arms with
	 * what is left.  Not in their mode now, they wait for the guest to
	 * go back to it, which no exit announces: no sooner than 1 ms, or a
	 * short period's kicks (each an exit, ~100 us on kvm_pvm) outran
	 * the emulated kernel code they interrupt. */
	if ((int64_t)dist < 0)
		dist = 0;
	if ((mode & PMU_MODE_ALL) != PMU_MODE_ALL &&
	    !(mode & pmu_vcpu_mode_now(v)) && dist < s->pmu->tsc_khz)
		dist = s->pmu->tsc_khz;
	return s->pmu->clock.tsc(s->pmu->clock.arg) + dist;
}

bool pmu_timer_earliest(const uint64_t *deadline, const bool *armed,
			uint64_t *tsc)
{
	bool any = false;

	for (unsigned int i = 0; i < PMU_NR; i++) {
		if (armed[i] && (!any || deadline[i] < *tsc)) {
			*tsc = deadline[i];
			any = true;
		}
	}
	return any;
}

unsigned int pmu_vcpu_mode_now(const struct pmu_vcpu *v)
{
	return v->page && v->page->guest.clock_on && v->page->guest.in_user ?
		PMU_MODE_USR : PMU_MODE_OS;
}
