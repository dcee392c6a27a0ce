/* SPDX-License-Identifier: MIT */
/*
 * `vmm stat --breakdown`: where the time of a run goes.  The vCPUs' time
 * split into the guest's (in KVM_RUN), the VMM's (handling exits, by exit
 * reason and hypercall) and halted; KVM's own statistics of the vCPUs
 * (insn_emulation: guest kernel instructions, emulated one by one on
 * kvm_pvm); and the guest kernel's entries by kind (uapi/kstat.h).
 */
#ifndef VMM_BREAKDOWN_H
#define VMM_BREAKDOWN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "config.h"
#include "kstat.h"

struct vm;

#define BD_EXIT_REASONS		64	/* KVM_EXIT_*, hypercalls apart */
#define BD_HYPERCALLS		64	/* PV_HC_* */
#define BD_KVM_STATS		160
#define BD_KSAMPLES		65536	/* kernel RIPs kept (1 ms samples) */
#define BD_KSYMS		12	/* kernel functions listed */

struct breakdown {
	uint64_t exits[BD_EXIT_REASONS], exit_cycles[BD_EXIT_REASONS];
	uint64_t hcalls[BD_HYPERCALLS], hcall_cycles[BD_HYPERCALLS];
	uint64_t vcpu_cycles;		/* boot to end, summed over vCPUs */
	uint64_t tsc_khz;
	int nkvm;			/* KVM statistics, summed over vCPUs */
	char kvm_names[BD_KVM_STATS][48];
	uint64_t kvm[BD_KVM_STATS];
	/* The vCPU's mode at a host timer's signal, every BD_SAMPLE_NS. */
	uint64_t samples_user, samples_kernel, samples_halted;
	/* The RIP of each kernel-mode sample, named by the kernel image
	 * (breakdown_set_kernel) as the busiest kernel functions. */
	uint64_t krip[BD_KSAMPLES];
	uint64_t nkrip;
	const void *kernel;
	size_t kernel_len;
	timer_t timer[VMM_MAX_CPUS];
	bool timer_tried[VMM_MAX_CPUS], timer_made[VMM_MAX_CPUS];
	bool have_kstat;		/* the guest registered its counts */
	struct pv_kstat kstat;
};

/* One line of the breakdown: a name, its unit ("" or "ns"), a value. */
struct bd_item {
	char name[64];
	const char *unit;
	uint64_t value;
};

/* After each exit (vCPU threads, concurrently): the VMM's cycles for it. */
void breakdown_exit(struct breakdown *b, uint32_t reason, int hypercall,
		    uint64_t cycles);
/* After each exit, on the vCPU's thread: starts its sampling timer the
 * first time, and counts the mode at the timer's KVM_EXIT_INTR (and keeps
 * the RIP of a kernel-mode one). */
void breakdown_exit_mode(struct breakdown *b, int cpu, uint32_t reason,
			 int mode, uint64_t rip);
/* The guest kernel's ELF image, for the names of sampled kernel RIPs. */
void breakdown_set_kernel(struct breakdown *b, const void *elf, size_t len);
/* The guest stopped: KVM's statistics, the guest's counts, the time. */
void breakdown_vm_end(struct breakdown *b, const struct vm *vm);
/* Every nonzero item, in print order; returns how many (at most max). */
size_t breakdown_items(const struct breakdown *b, struct bd_item *it,
		       size_t max);
/* Human (stderr-style), -x SEP or --json lines, as `vmm stat` prints. */
void breakdown_print(FILE *f, const struct vmm_stat *st,
		     const struct breakdown *b);

/* "getppid", or NULL for a number without a name here. */
const char *breakdown_syscall_name(unsigned int nr);

#endif
