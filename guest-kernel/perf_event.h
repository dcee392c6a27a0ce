/* SPDX-License-Identifier: MIT */
#ifndef KERNEL_PERF_EVENT_H
#define KERNEL_PERF_EVENT_H

#include "kernel.h"

struct task;
struct pv_vpmu_thread_page;
struct pv_perf_mmap_page;

/*
 * One perf_event_open() fd.  A hardware event is counter slot `idx` of its
 * owner's page (-1 while multiplexing has none for it); a software one
 * reads the owner's task fields.
 *
 * Counting is folded into `acc` at every state change (perf_event.c's
 * event_sync()), so a value is acc plus the raw count since `base` while
 * the event is live; time enabled and running advance on the owner's CPU
 * time, as Linux's per-task context time does.
 */
struct perf_event {
	struct task *owner;		/* NULL once it exited */
	int owner_tid;
	int idx;
	u32 sw;				/* PERF_COUNT_SW_* + 1, 0: hardware */
	u64 evtsel;
	u64 id;				/* PERF_EVENT_IOC_ID, PERF_FORMAT_ID */
	u64 period;			/* sample_period: interrupts when set */
	u64 read_format;
	u64 sample_type;		/* PERF_SAMPLE_*: the ring's records */
	bool enabled;			/* its own state (IOC_ENABLE) */
	bool live;			/* counting now: enabled, leader too */
	bool inherit;
	bool fixed;			/* pinned, or read in place by libvpmu:
					 * never rotated off its counter */
	bool in_place;			/* read in place (IOC_COUNTER): keeps
					 * its counter while disabled too */
	bool absent;			/* no counter of this PMU counts it:
					 * never scheduled (EVENT_ABSENT) */
	bool error;			/* absent and pinned, once enabled:
					 * Linux's error state, read() 0 */
	bool async;			/* O_ASYNC: signal on overflow */
	bool sig_to_thread;		/* F_SETOWN_EX F_OWNER_TID */
	int signo;			/* F_SETSIG, 0: SIGIO without si_fd */
	int sig_tid;			/* F_SETOWN(_EX) */
	int fd;				/* for si_fd: where fcntl() set it up */
	int limit;			/* IOC_REFRESH: overflows left, 0: any */
	u64 acc;			/* count up to the last sync */
	u64 base;			/* raw count at the last sync */
	u64 clock;			/* owner's CPU TSC at the last sync */
	u64 ena_tsc, run_tsc;		/* time enabled, running (TSC) */
	u64 child_counts;		/* inherit: exited children's counts */
	u64 done;			/* sampling: events before restart */
	u64 restart;			/* the counter's value when last set */
	u64 rdpmc_max;			/* the highest count rdpmc gave */
	struct perf_event *leader;	/* itself when it leads */
	struct perf_event *sibling;	/* next in its leader's group */
	struct perf_event *task_next;	/* owner's perf_list */
	struct pv_perf_mmap_page *page;	/* mmap() offset 0, once mapped */
	u64 page_va, page_len;
	struct mm *page_mm;
	/* page_mm's code_gen when the mapping was last found in place, and
	 * the ring page last written and its frame, good while it holds:
	 * each PMI's record skips two page-table walks (event_ring_page()) */
	u64 page_gen;
	u64 ring_va, ring_pa;
};

s64 sys_perf_event_open(u64 uattr, u64 pid, u64 cpu, u64 group, u64 flags,
			u64 a5);
/* Counter idx of t overflowed, and its PMI interrupted tf; kip: where in
 * the kernel the VMM found the overflow, 0 if not there (kpmu_pmi()). */
bool perf_event_overflow(struct task *t, int idx, struct trapframe *tf,
			 u64 kip);
bool perf_event_rdpmc(struct task *t, struct trapframe *tf);
s64 perf_event_mmap(struct perf_event *e, u64 len, u64 prot, u64 flags,
		    u64 off);
/* A tick of t while t->perf_waiting: the counters change hands. */
void perf_event_rotate(struct task *t);
/* t exits: its events keep what they counted. */
void perf_event_task_exit(struct task *t);
/* Counter slots of parent a new thread must not count for it: those of
 * events without attr.inherit. */
u32 perf_event_private_slots(const struct task *parent);
u64 perf_config_id(const struct pv_vpmu_thread_page *tp);

/*
 * A PERF_TYPE_HARDWARE, _HW_CACHE or _RAW config as the virtual PMU's
 * event select and umask in *ev (perf_event_map.c): 0, an errno where
 * Linux refuses it, or EVENT_ABSENT for an encoding no counter counts.
 */
#define EVENT_ABSENT	1
int perf_event_map(u32 type, u64 config, u16 *ev);

#endif
