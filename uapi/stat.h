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

#endif
