/* SPDX-License-Identifier: MIT */
#ifndef VMM_VCPU_PMU_H
#define VMM_VCPU_PMU_H

#include <linux/kvm.h>
#include <stdbool.h>
#include <stdint.h>

#include "pmu.h"

struct vm;
struct vcpu;

/* The VM's virtual PMU: the pmu/ library plus what needs KVM. */
int vpmu_vm_setup(struct vm *vm);
void vpmu_vm_destroy(struct vm *vm);
/* Entries vpmu_cpuid_fixup() may append: room the caller leaves. */
#define PMU_CPUID_SPARE		1
void vpmu_cpuid_fixup(struct vm *vm, struct kvm_cpuid2 *c);
void vpmu_before_run(struct vcpu *v);
void vpmu_after_run(struct vcpu *v);
int64_t vpmu_hypercall(struct vcpu *v, uint64_t nr, uint64_t a, uint64_t b,
		       uint64_t c);

#endif
