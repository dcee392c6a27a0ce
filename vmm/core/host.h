/* SPDX-License-Identifier: MIT */
/*
 * The kind of KVM underneath (kvm_pvm or standard VMX/SVM), found once per
 * VM, and the set-up a standard KVM needs that kvm_pvm does not.
 */
#ifndef VMM_HOST_H
#define VMM_HOST_H

#include <stdbool.h>
#include <stdint.h>

#include "boot.h"

struct vm;
struct vcpu;

/* "auto", "pvm" or "standard" to enum pv_host_kind; 0 if none of them. */
uint32_t host_kind_parse(const char *name);
/* The kind of the KVM behind /dev/kvm: kvm_pvm when that module is loaded. */
uint32_t host_kind_detect(void);
const char *host_kind_name(uint32_t kind);
/* Whether user code in the guest runs CPUID natively, not from our table. */
bool host_user_cpuid_native(uint32_t kind);
/* Whether the guest's programs must be told libpfm4's PMU (PV_BOOT_PFM_FORCE). */
bool host_pfm_must_force(uint32_t kind);

/* Before any vCPU exists: turn off KVM's own vPMU where KVM offers that. */
int host_pmu_disable(struct vm *vm);
/* Guest TSC = host TSC on every host (a new VM's TSC starts near 0). */
int host_tsc_match(struct vcpu *v);

#endif
