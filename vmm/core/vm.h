/* SPDX-License-Identifier: MIT */
#ifndef VMM_VM_H
#define VMM_VM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "config.h"
#include "vcpu_pmu.h"
#include "vcpu_sample.h"

struct kvm_run;
struct pmu;
struct pmu_vcpu;
struct pv_sample;
struct pv_stat_record;
struct share_table;
struct step_blocks;
struct vm;

/*
 * What the tools (vmm stat, vmm record) hear about a run: the core calls
 * these and never knows which tool listens.  Called from vCPU threads;
 * NULL members are skipped; ctx is handed back.
 */
struct vm_observer {
	void *ctx;
	/* PV_HC_STAT_THREAD: an exited guest thread's counts (VM lock held). */
	void (*thread_exit)(void *ctx, const struct pv_stat_record *r);
	/* One sample, time_ns since boot: the guest's (PV_HC_SAMPLE) or the
	 * VMM's, read at a host timer's exit (vcpu_sample.c); chain[nchain]:
	 * with -g, the return addresses of user code's frames, innermost
	 * first (nchain 0: none). */
	void (*sample)(void *ctx, const struct pv_sample *r, uint64_t time_ns,
		       const uint64_t *chain, uint32_t nchain);
	/* After each exit: the VMM's own time for it, in TSC cycles;
	 * hypercall is its number for a hypercall exit, else -1. */
	void (*exit_time)(void *ctx, int cpu, uint32_t exit_reason,
			  int hypercall, uint64_t time_ns, uint64_t cycles);
	/* After each exit, on the vCPU's own thread: the mode the vCPU was
	 * in (what a host signal's KVM_EXIT_INTR samples), enum vm_mode. */
	void (*exit_mode)(void *ctx, int cpu, uint32_t exit_reason, int mode,
			  uint64_t rip);
	/* The guest stopped; the vCPUs' state is still there to read. */
	void (*end)(void *ctx, const struct vm *vm);
};

/* A vCPU's mode at an exit; halted is told only for KVM_EXIT_INTR. */
enum vm_mode { VM_MODE_USER, VM_MODE_KERNEL, VM_MODE_HALTED };

struct vcpu {
	struct vm *vm;
	int id;
	int fd;
	struct kvm_run *run;
	size_t run_size;
	pthread_t thread;
	uint64_t exits;			/* all exits handled by this vCPU */
	uint64_t hypercalls;
	uint64_t yields;		/* PV_HC_YIELD: a spinning vCPU */
	uint64_t hypercall_nr;		/* the last one's: rax holds its result */
	struct vcpu_pmu pmu;		/* this vCPU's virtual PMU glue */
	struct vcpu_sample sample;	/* record's VMM-side sampling */
};

/* Why the VM stopped; decides the VMM's exit status. */
enum vm_stop {
	VM_RUNNING = 0,
	VM_STOP_EXIT,		/* the program exited (status in exit_status) */
	VM_STOP_ERROR,		/* VMM or guest kernel failure: exit 125 */
};

struct vm {
	const struct vmm_config *cfg;
	int kvm_fd;
	int fd;
	uint8_t *mem;			/* host mapping of guest RAM at GPA 0 */
	uint64_t mem_size;
	uint64_t tsc_khz;
	uint32_t host_kind;		/* enum pv_host_kind */
	atomic_int kstep_vcpus;		/* vCPUs whose kernel code KVM steps */
	struct pmu *pmu;
	struct step_blocks *blocks;	/* step source by blocks, or NULL */
	struct share_table *shares;	/* --dir, --cwd (share.c), or NULL */
	bool steal_time;		/* KVM offers the steal-time MSR */
	const struct vm_observer *observer;	/* the tool watching, or NULL */
	struct vm_sampling sampling;	/* record from the VMM side, or 0 */
	uint64_t kstat_gpa;		/* struct pv_kstat (PV_HC_KSTAT), or 0 */
	uint64_t boot_tsc;
	pthread_t populate_thread;
	bool populate_started;
	int run_size;
	int ncpus;
	struct vcpu *vcpus;

	pthread_mutex_t lock;		/* stop state, console */
	pthread_cond_t stopped;
	atomic_int stop;		/* enum vm_stop */
	int exit_status;
	char stop_msg[256];		/* one-line cause for VM_STOP_ERROR */

	/* Serial line being assembled, flushed at '\n' or exit. */
	char serial_buf[256];
	size_t serial_len;
};

int vm_create(struct vm *vm, const struct vmm_config *cfg);
void vm_destroy(struct vm *vm);
int vm_vcpus_create(struct vm *vm, uint64_t entry);
int vm_run(struct vm *vm);
void vm_request_stop(struct vm *vm, enum vm_stop why, int status,
		     const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Allocations the guest kernel refused for lack of RAM (the --mem hint). */
uint64_t vm_mem_refused(struct vm *vm);

/* Guest physical memory access with bounds checks: NULL when out of range. */
void *vm_gpa_to_hva(struct vm *vm, uint64_t gpa, uint64_t len);

#endif
