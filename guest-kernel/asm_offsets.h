/* SPDX-License-Identifier: MIT */
/*
 * Structure offsets used by entry.S, checked against the C definitions by
 * _Static_assert in pmu_guest.c so that the two cannot drift apart.
 */
#ifndef KERNEL_ASM_OFFSETS_H
#define KERNEL_ASM_OFFSETS_H

#define KSTACK_SIZE_ASM		16384
#define TASK_CPU		16
#define TASK_STEP_RIP		40
#define TASK_ICACHE		48	/* struct step_icache[STEP_ICACHE] */
#define STEP_ICACHE		256
#define CPU_VPAGE		0
#define VP_STEP_ENABLE		2048
#define VP_STEP_COUNT_INSNS	2056
#define VP_STEP_COUNT_BRANCHES	2072
#define VP_STEP_DL_INSNS	2088
#define VP_STEP_DL_BRANCHES	2104

/* icache entry flags */
#define ICACHE_BRANCH		2
#define ICACHE_REP_STRING	4

#endif
