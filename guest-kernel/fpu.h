/* SPDX-License-Identifier: MIT */
#ifndef PERFVISOR_KERNEL_FPU_H
#define PERFVISOR_KERNEL_FPU_H

#include "boot.h"

struct cpu;
struct task;

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

#endif
