/* SPDX-License-Identifier: MIT */
/*
 * Kernel entry counts (`vmm stat --breakdown`): the guest kernel counts
 * every entry in one array, exceptions and interrupts by IDT vector and
 * system calls by number, and registers its address with PV_HC_KSTAT when
 * the boot parameters ask (PV_BOOT_KSTAT).  The VMM reads it when the
 * guest has stopped.
 *
 * One array for all vCPUs, counted with `lock incq`: one instruction per
 * entry (every guest kernel instruction is emulated on kvm_pvm), and no
 * per-CPU lookup on paths that have no free register for it.
 */
#ifndef PV_UAPI_KSTAT_H
#define PV_UAPI_KSTAT_H

#include <stdint.h>

#define PV_KSTAT_VECTORS	256
#define PV_KSTAT_SYSCALLS	512	/* numbers from 511 up count in 511 */

/* The kernel's own interrupt vectors (guest-kernel/task.h). */
#define PV_KSTAT_VEC_TIMER	0x20
#define PV_KSTAT_VEC_RESCHED	0x21	/* the only IPI */
#define PV_KSTAT_VEC_PMI	0x22
#define PV_KSTAT_VEC_INT80	0x80	/* i386 system calls, standard KVM */

#define PV_KSTAT_CPUS		64	/* return_rip[]: vCPUs 0-63 */

struct pv_kstat {
	/* Exceptions and interrupts, system calls not included: a user
	 * `syscall` arrives as #PF on kvm_pvm but counts in syscall[].
	 * An `int $0x80` counts here only (#UD on kvm_pvm, 0x80 else). */
	uint64_t vector[PV_KSTAT_VECTORS];
	uint64_t syscall[PV_KSTAT_SYSCALLS];
	/*
	 * Per vCPU, the user RIP the kernel last returned to: a sampling
	 * kick that finds the vCPU still there came while the kernel ran
	 * (vmm/core/vcpu_pmu.c, vcpu_pmu_mode()).  Kept while the entry
	 * counts are registered (vmm stat --breakdown).
	 */
	uint64_t return_rip[PV_KSTAT_CPUS];
};

_Static_assert(sizeof(struct pv_kstat) == 6144 + 8 * PV_KSTAT_CPUS,
	       "kstat size");

#endif
