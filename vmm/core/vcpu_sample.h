/* SPDX-License-Identifier: MIT */
/*
 * `vmm record` sampling from the VMM side (vcpu_sample_*): a host timer on
 * each vCPU thread makes KVM_RUN return once a period of the guest's time
 * has run, and the VMM reads where the vCPU was (RIP and CPL, from the
 * registers KVM syncs into kvm_run at every exit) and which guest thread
 * ran (from guest memory, uapi/stat.h) into a sample.  The guest kernel
 * never runs for it.
 */
#ifndef VMM_VCPU_SAMPLE_H
#define VMM_VCPU_SAMPLE_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

struct pv_sample;
struct vcpu;
struct vm;

/* What to sample, set by the tool before the vCPUs run; period_tsc 0: off. */
struct vm_sampling {
	uint64_t period_tsc;	/* TSC ticks of the thread's time a sample */
	uint64_t period;	/* what one sample stands for, event units */
	bool wall;		/* task-clock: VMM time and steal count too */
	bool callchain;		/* -g: walk user code's frame pointers */
};

/* -g: return addresses read at most per sample (perf's user default). */
#define VCPU_SAMPLE_CHAIN_MAX	127

/* Time against the period, in TSC ticks. */
struct sample_budget {
	uint64_t period;
	uint64_t acc;		/* ticks since the last period ended */
};

/*
 * Add ticks of time, then take off steal (ticks the thread waited for a
 * host CPU since the last call) from the time not yet sampled; returns how
 * many periods ended.
 */
uint64_t sample_budget_add(struct sample_budget *b, uint64_t ticks,
			   uint64_t steal);

/* One vCPU's sampler. */
struct vcpu_sample {
	struct sample_budget budget;
	timer_t timer;
	bool timer_made;
	bool rearm;		/* a sample was taken: aim the timer again */
	uint64_t deadline_tsc;	/* when the armed timer fires */
	uint64_t run_tsc;	/* the last KVM_RUN's start (wall: the last exit) */
	int delay_fd;		/* the thread's /proc schedstat, if open */
	bool delay_open;
	uint64_t delay_seen;	/* its run_delay already taken off, ns */
	uint64_t counted;	/* TSC ticks the last run added */
	uint64_t kick_ticks;	/* the least kick's way out seen, 0: none */
	uint64_t kick_late;	/* the last kick's, until its steal is known */
	uint64_t taken, idle;	/* samples taken; periods that found idle */
	uint64_t stolen;	/* steal taken off, TSC ticks (-v) */
};

/*
 * The thread that TSS.rsp0 names (tss_base: TR's base, a kernel address)
 * into s->pid, tid and comm.  False for a vCPU's idle task, or a layout that
 * does not read back (the guest is mid-switch or broken): no sample.
 */
bool vcpu_sample_thread(struct vm *vm, uint64_t tss_base, struct pv_sample *s);

/* Around every KVM_RUN on the vCPU's thread; nothing when sampling is off. */
void vcpu_sample_before_run(struct vcpu *v);
void vcpu_sample_after_run(struct vcpu *v);
void vcpu_sample_destroy(struct vcpu *v);

#endif
