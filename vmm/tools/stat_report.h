/* SPDX-License-Identifier: MIT */
#ifndef VMM_STAT_REPORT_H
#define VMM_STAT_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "config.h"
#include "vm.h"

struct boot_pmu;
struct breakdown;
struct pmu;
struct pv_stat_record;

/* One exited thread's counts, indexed like cfg->stat events. */
struct stat_thread {
	int pid, tid;
	char comm[16];
	uint64_t run_ns;
	uint64_t switches;
	uint64_t count[VMM_STAT_EVENTS];
};

/* What one `vmm stat` run collected. */
struct stat_run {
	bool supported[VMM_STAT_EVENTS];
	int slot[VMM_STAT_EVENTS];	/* guest counter of event i, or -1 */
	int nthreads, cap;
	struct stat_thread *threads;
	double elapsed_s;
	uint64_t vcpu_total[VMM_STAT_EVENTS];	/* sum over vCPUs at the end */
	uint64_t switch_hcalls;		/* PV_HC_PMU_SWITCH over all vCPUs */
	uint64_t guest_switches;	/* the guest kernel's counted switches */
	const struct vmm_stat *st;	/* what was asked for */
	struct breakdown *bd;		/* --breakdown, or NULL */
	struct vm_observer observer;	/* run, listening to the VM */
};

/*
 * Before a run: give the supported events guest counters (bpmu's stat part)
 * and return the observer that collects the run's records into run.
 */
const struct vm_observer *stat_prepare(const struct vmm_stat *st,
				       struct pmu *pmu, struct boot_pmu *bpmu,
				       struct stat_run *run);
/* PV_HC_STAT_THREAD: one record (called under the VM lock). */
void stat_record_add(struct stat_run *run, const struct vmm_stat *st,
		     const struct pv_stat_record *r);
/* Print like perf stat: human, -x SEP (CSV), or --json. */
void stat_print(FILE *f, const struct vmm_config *cfg,
		const struct stat_run *runs, int nruns);
void stat_run_free(struct stat_run *run);
/* Defaults when no -e: what the source counts among the usual events. */
void stat_default_events(struct vmm_stat *st, const char *source);

#endif
