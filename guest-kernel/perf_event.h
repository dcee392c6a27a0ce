/* SPDX-License-Identifier: MIT */
#ifndef KERNEL_PERF_EVENT_H
#define KERNEL_PERF_EVENT_H

#include "kernel.h"

struct task;

/* One perf_event_open() fd: counter slot `idx` of its owner's page. */
struct perf_event {
	struct task *owner;
	int owner_tid;
	int idx;
	u64 period;			/* sample_period: interrupts when set */
	u64 read_format;
	bool enabled;
	bool async;			/* O_ASYNC: signal on overflow */
	int signo;			/* F_SETSIG, SIGIO by default */
	int sig_tid;			/* F_SETOWN */
	u64 base;			/* raw count at the last reset/enable */
	u64 frozen;			/* value while disabled */
	u64 child_counts;		/* inherit: exited children's counts */
	u64 overflows;
};

s64 sys_perf_event_open(u64 uattr, u64 pid, u64 cpu, u64 group, u64 flags,
			u64 a5);
bool perf_event_overflow(struct task *t, int idx, struct trapframe *tf);

#endif
