/* SPDX-License-Identifier: MIT */
#ifndef VMM_VCPU_PMU_H
#define VMM_VCPU_PMU_H

#include <linux/kvm.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "pmu.h"

struct vm;
struct vcpu;

/*
 * One vCPU's virtual PMU glue (vcpu_pmu_*): its pmu/ state (pmu_*) plus what
 * only the VMM can do with KVM: PMI injection, the tsc source's deadline
 * timer, the step source's single-stepping of kernel code, steal time.
 */
struct vcpu_pmu {
	struct pmu_vcpu *pv;		/* this vCPU's virtual PMU */
	uint64_t pmis;			/* PMIs injected */
	bool pmi_masked;		/* LVTPC masked by our last PMI */
	bool pmi_deferred;		/* a PMI waiting for LVTPC's unmask */
	uint64_t steal_seen;		/* KVM steal time reported so far, ns */
	timer_t timer;			/* tsc source overflow deadline */
	bool timer_made, timer_armed;
	uint64_t timer_tsc;		/* the armed timer's TSC deadline */
	uint64_t exit_tsc;		/* record -a: when the last exit began */
	/* step source, CPL0: KVM_GUESTDBG_SINGLESTEP is on, and where the
	 * instruction the next KVM_EXIT_DEBUG retires began. */
	bool kstep;
	bool kstep_cpl0;
	bool kstep_quiet;		/* the last exit was a step pmu/ skipped */
	bool kstep_failed;		/* KVM refused single-stepping */
	uint64_t kstep_rip;
	/* A step's cost (pmu_vcpu_kernel_step_cost()): KVM_RUN's entry and
	 * a quiet step's exit, and the least round trip of one step seen. */
	uint64_t kstep_entry_tsc, kstep_exit_tsc, kstep_least;
	uint64_t block_exit_tsc;	/* a quiet block trap's exit, */
	uint64_t block_least;	/* and the least trip to one */
	uint64_t block_cost;	/* the trip's cost to book */
	uint64_t entry_booked;	/* pmu_vcpu_booked_tsc() at the entry */
	int64_t step_account;		/* PV_HC_STEP_ACCOUNT's result */
};

/* The VM's virtual PMU: the pmu/ library plus what needs KVM. */
int vcpu_pmu_vm_setup(struct vm *vm);
void vcpu_pmu_vm_destroy(struct vm *vm);
/* Entries vcpu_pmu_cpuid_fixup() may append: room the caller leaves. */
#define PMU_CPUID_SPARE		1
void vcpu_pmu_cpuid_fixup(struct vm *vm, struct kvm_cpuid2 *c);
void vcpu_pmu_before_run(struct vcpu *v);
void vcpu_pmu_after_run(struct vcpu *v);
int64_t vcpu_pmu_hypercall(struct vcpu *v, uint64_t nr, uint64_t a,
			   uint64_t b, uint64_t c);

#endif
