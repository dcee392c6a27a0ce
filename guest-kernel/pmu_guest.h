/* SPDX-License-Identifier: MIT */
/*
 * The guest half of the virtual PMU: per-thread counter accounting at the
 * scheduler's switch points (Perfctr-Xen's a-mode Sum_thread/Start*_thread
 * and i-mode save/restore).  No-ops until a thread uses counters.
 */
#ifndef KERNEL_PMU_GUEST_H
#define KERNEL_PMU_GUEST_H

#include <stdbool.h>

struct task;

static inline void pmu_switch_out(struct task *t)
{
	(void)t;
}

static inline void pmu_switch_in(struct task *t)
{
	(void)t;
}

struct trapframe;

/* PMI (LVTPC vector): find the owning thread, deliver or mark pending. */
static inline void pmu_pmi(struct trapframe *tf)
{
	(void)tf;
}

/* #DB from user mode for the step source; false when not ours. */
static inline bool pmu_debug_trap(struct trapframe *tf)
{
	(void)tf;
	return false;
}

#endif
