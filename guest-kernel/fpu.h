/* SPDX-License-Identifier: MIT */
#ifndef PERFVISOR_KERNEL_FPU_H
#define PERFVISOR_KERNEL_FPU_H

#include "boot.h"
#include "hypercall.h"
#include "task.h"

/* Boot: switch through the VMM when the boot flags ask and it works. */
void fpu_init(const struct pv_boot_params *bp);
/* A new task's save area (task_alloc), and its release (task_free). */
int fpu_task_init(struct task *t);
void fpu_task_free(struct task *t);
/* The live legacy area (x87, SSE) to and from t->fxsave: signal frames. */
void fpu_legacy_save(struct task *t);
void fpu_legacy_load(const struct task *t);
/* The live registers into t's area: clone gives the child its parent's. */
void fpu_save_live(struct task *t);
/* Default state, live and saved: exec, and the first task. */
void fpu_reset(struct task *t);
/* The CPU moves from prev to next (sched_switch); idle has no FPU state. */
void fpu_switch(struct task *prev, struct task *next, struct cpu *c);

/*
 * fpu_switch()'s common case, inline for sched_yield_fast(): thread to
 * thread (both have an mm) with prev's registers loaded on c, handed over
 * through the VMM in one exit.  c->fpu_owner: whose state c's registers
 * hold, set only when the VMM switches (fpu_init()), so never prev
 * without it; t->fpu_cpu: where t's newest state is (NULL: in its page);
 * t->fpu_dirty: its page is older than those registers (one vCPU only).
 */
static __always_inline bool fpu_loaded(const struct task *t,
				       const struct cpu *c)
{
	return c->fpu_owner == t && t->fpu_cpu == c;
}

static __always_inline void fpu_handover(struct task *prev, struct task *next,
					 struct cpu *c)
{
	hcall(PV_HC_FPU_SWITCH, prev->xstate_pa, next->xstate_pa, 0);
	prev->fpu_dirty = false;
	prev->fpu_cpu = NULL;
	c->fpu_owner = next;
	next->fpu_cpu = c;
}

#endif
