/* SPDX-License-Identifier: MIT */
/*
 * `vmm stat`: the guest kernel counts the events the VMM asked for (boot
 * parameters) in every thread of the program, inherited across clone and
 * fork, and reports each thread's logical counts when it exits.
 */
#ifndef PV_UAPI_STAT_H
#define PV_UAPI_STAT_H

#include <stdint.h>

#define PV_STAT_MAX_EVENTS	4	/* the general-purpose counters */

/* PV_HC_STAT_THREAD (gpa of this record): one exited thread's counts. */
struct pv_stat_record {
	int32_t pid;
	int32_t tid;
	char comm[16];
	uint64_t run_ns;		/* the thread's CPU time */
	uint64_t count[PV_STAT_MAX_EVENTS];
	uint64_t switches;		/* times it was switched in */
};

_Static_assert(sizeof(struct pv_stat_record) == 72, "stat record size");

/* PV_HC_SAMPLE (gpa of this record): `vmm record`, one per overflow. */
struct pv_sample {
	int32_t pid;
	int32_t tid;
	uint32_t cpu;
	uint32_t user;			/* 1: ip is a user address */
	uint64_t ip;			/* interrupted instruction */
	uint64_t time_tsc;
	uint64_t period;
	char comm[16];
};

_Static_assert(sizeof(struct pv_sample) == 56, "sample size");

/*
 * `vmm record` sampling from the VMM side: at a host timer's exit the VMM
 * names the thread a vCPU runs from guest memory, with no hypercall and no
 * work at the switch.  TSS.rsp0 (TR's base + PV_TSS_RSP0, set at every
 * thread switch) is the top of the running task's kernel stack, and the
 * task sits at the stack's PV_KSTACK_SIZE-aligned bottom.  These offsets
 * are the fields read there (guest-kernel/sched.c asserts them).  A task
 * without a process (PV_TASK_PROC 0) is a vCPU's idle task.
 */
#define PV_KSTACK_SIZE		16384
#define PV_TSS_RSP0		4
#define PV_TASK_PROC		32	/* struct proc *, kernel address */
#define PV_TASK_TID		4136	/* int32_t */
#define PV_TASK_COMM		5168	/* char[16] */
#define PV_PROC_PID		0	/* int32_t */

#endif
