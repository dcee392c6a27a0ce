/* SPDX-License-Identifier: MIT */
/*
 * Structure offsets used by entry.S, checked against the C definitions by
 * _Static_assert in pmu_guest.c so that the two cannot drift apart.
 */
#ifndef KERNEL_ASM_OFFSETS_H
#define KERNEL_ASM_OFFSETS_H

#define KSTACK_SIZE_ASM		16384
#define TASK_CPU		16
#define TASK_PROC		32
#define TASK_ICACHE		40	/* struct step_icache[STEP_ICACHE] */
#define STEP_ICACHE		256
#define TASK_TID		4136	/* after icache[] */
#define TASK_SIGMASK		4208
#define TASK_SIGPENDING		4232
#define PROC_PID		0
#define PROC_SIGPENDING		80
#define CPU_RTU			20	/* struct cpu's rtu_word */
#define CPU_VPAGE		0
#define CPU_USER_RSP		8	/* scratch for the syscall entry */
#define CPU_TSS_RSP0		44	/* struct cpu's tss.rsp0 */
#define DF_STACK_SIZE		4096
#define USER_CS_ASM		0x33	/* PV_SEL_UCODE */
#define USER_SS_ASM		0x2b	/* PV_SEL_UDATA */
/* RFLAGS a user may set (CF PF AF ZF SF TF DF OF AC), and IF | bit 1 */
#define RFLAGS_USER_ASM		0x40dd5
#define RFLAGS_TF_ASM		0x100
#define RFLAGS_RET_ASM		0x202
/* struct pv_boot_params's kstep_live, through the kernel's map of it */
#define KSTEP_LIVE_VA		(0xffffffff80002000 + 6736)
#define VP_STEP_ENABLE		2048
#define VP_STEP_COUNT_INSNS	2056
#define VP_STEP_COUNT_BRANCHES	2072
#define VP_STEP_DL_INSNS	2096
#define VP_STEP_DL_BRANCHES	2112
#define VP_STEP_RIP		2136
#define VP_STEP_TRAPS		2152
#define PV_BP_PORT_ASM		0xf5	/* uapi/hypercall.h PV_BP_PORT */
#define PV_PF_ERR_STEP_ASM	0x8000	/* and PV_PF_ERR_STEP */

/* struct trapframe */
#define TF_RAX			112
#define TF_RFLAGS		152
/* syscall.c: sys_table[]'s length; a NULL entry is ENOSYS */
#define NR_MAX_ASM		335

/* struct pv_kstat (uapi/kstat.h) */
#define KSTAT_SYSCALL		2048	/* syscall[], after vector[256] */
#define KSTAT_SYSCALLS		512

/* icache entry flags */
#define ICACHE_BRANCH		2
#define ICACHE_REP_STRING	4

#endif
