/* SPDX-License-Identifier: MIT */
/*
 * The guest half of the virtual PMU (Nikolaev & Back, VEE 2011): per-CPU
 * pages the VMM publishes Phys* in, per-thread pages with Sum_thread and
 * Start*_thread updated only at the scheduler's switch point, the single-
 * stepping #DB handler of the `step` source, and the PMI handler.
 */
#ifndef KERNEL_PMU_GUEST_H
#define KERNEL_PMU_GUEST_H

#include <stdbool.h>
#include <stdint.h>

#include "vpmu.h"

struct task;
struct cpu;
struct trapframe;

void kpmu_cpus_alloc(u32 ncpus);
void kpmu_cpu_init(struct cpu *c);
/* The least trip, measured over the boot's first system calls before any
 * counter needs it (the mode clock, design.md 4.6): start at boot, and
 * the stamps at a system call's entry and at each return while on. */
void kpmu_trip_start(void);
void kpmu_trip_entry(struct cpu *c);
void kpmu_trip_return(struct cpu *c);
void kpmu_woken(struct cpu *c);
void kpmu_woken_return(struct cpu *c);
void kpmu_woken_entry(struct cpu *c);
/* The switch point: prev's counts folded, next's started (a-mode), or
 * one batched hypercall when the policy needs the VMM (i-mode).  Only
 * when prev or next has a thread page. */
void kpmu_switch(struct task *prev, struct task *next, struct cpu *c);
void kpmu_task_init(struct task *t, struct task *parent);
void kpmu_task_exit(struct task *t);
int kpmu_task_alloc_page(struct task *t);
void kpmu_task_config_changed(struct task *t);
uint64_t kpmu_task_count(struct task *t, int idx);
uint64_t kpmu_pmi_count(struct task *t, int idx);
void kpmu_task_free(struct task *t);
/*
 * The VMM wants the kernel's return-to-user work on this vCPU (its page):
 * the step source steps user code, or a counter reads the mode clock.
 */
static inline bool kpmu_step_on(const struct pv_vpmu_vcpu_page *vp)
{
	return vp->step.enable != 0;
}
/* Before returning to user mode: single-step when the step source runs. */
void kpmu_user_return(struct task *t, struct trapframe *tf);
/* A user instruction retired without a #DB (syscall, int $0x80), on the
 * vCPU page vp: counted only while the step source runs (an inline test,
 * since this is on every system call's path). */
void kpmu_step_count_insn(struct pv_vpmu_vcpu_page *vp);
static inline void kpmu_count_trap_insn(struct pv_vpmu_vcpu_page *vp)
{
	if (__builtin_expect(vp->step.enable & 1, 0))
		kpmu_step_count_insn(vp);
}
/*
 * A kernel entry from user mode before the instruction at tf->rip - back
 * (a fault, an interrupt, or a system call's own instruction): counting
 * by blocks, the instructions user code ran untraced since step.rip are
 * counted now (kpmu_step_entry()), before anything reads or folds the
 * counts.  From the VMM's code cache, the VMM also moves the frame back to
 * the program's own code (vmm/core/step_cache.c).
 */
struct trapframe;
void kpmu_step_entry(struct pv_vpmu_vcpu_page *vp, struct trapframe *tf,
		     u64 back);
static inline void kpmu_user_entry(struct pv_vpmu_vcpu_page *vp,
				   struct trapframe *tf, u64 back)
{
	if (__builtin_expect(vp->step.enable &
			     (PV_STEP_BLOCKS | PV_STEP_MODE_CLOCK), 0))
		kpmu_step_entry(vp, tf, back);
}
bool kpmu_debug_trap(struct trapframe *tf);
uint64_t kpmu_sample_start(int idx);
uint64_t kpmu_rearm(int idx, uint64_t period, uint64_t *set);
void kpmu_pmi(struct trapframe *tf);
/*
 * Where a sample of a PMI's overflow is, for an event of PERFEVTSEL
 * evtsel: kip, where in the kernel the VMM found the overflow (0: not
 * there), when the event counts kernel mode, else the interrupted tf.
 * Sets *ip; returns whether that is user mode.
 */
bool kpmu_sample_ip(uint64_t kip, uint64_t evtsel,
		    const struct trapframe *tf, uint64_t *ip);

#endif
