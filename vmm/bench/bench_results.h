/* SPDX-License-Identifier: MIT */
/*
 * vmm bench suite results: what one suite run measured per workload, how
 * counts are read back from `vmm stat -x,` and stepcount output, and the
 * JSON, CSV and Markdown writers.  No process handling here, so the unit
 * tests can feed it text and compare what it writes.
 */
#ifndef VMM_BENCH_RESULTS_H
#define VMM_BENCH_RESULTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Wall-time configurations of the overhead part, in table order. */
enum { CFG_NATIVE, CFG_GUEST, CFG_OFFSET, CFG_SAVERESTORE, CFG_RAW, NCFG };
extern const char *const bench_cfg_names[NCFG];

/* The two sizes the step comparison takes the difference of. */
enum { STEP_MICRO, STEP_TINY, NSTEP_SIZES };
/* The step source's ways of trapping user code (--step-mode). */
enum bench_step_mode { STEP_CACHE, STEP_SINGLE, STEP_INT3, NSTEP_MODES };
extern const char *const bench_step_sizes[NSTEP_SIZES];

/* Policies counted under host preemption: offset, saverestore, raw. */
#define NPREEMPT 3

/* The kernel part: one `vmm stat --breakdown` of the workload. */
#define BENCH_TOP_SYSCALLS 5
struct bench_kernel {
	uint64_t vcpu_ns, guest_ns, vmm_ns, halted_ns;	/* time:* */
	uint64_t user_ns, kernel_ns;	/* guest_ns split by sampling */
	uint64_t samples;		/* how many samples split it */
	uint64_t kernel_insns;		/* kvm:insn_emulation */
	uint64_t kvm_exits, pf_fixed;	/* kvm:exits, kvm:pf_fixed */
	uint64_t vmm_exits;		/* sum of vmm-exit:* */
	uint64_t syscalls, page_faults, timer, ipi, pmi, debug; /* kentry:* */
	struct {
		char name[24];
		uint64_t count;
	} top[BENCH_TOP_SYSCALLS];	/* most frequent system calls first */
	int ntop;
};

struct bench_wl_result {
	const char *name;
	bool have_overhead;	/* the overhead part ran */
	double time_s[NCFG];	/* median wall seconds */
	double native_tsc;	/* median TSC ticks of the native process */
	double guest_cycles;	/* median `cycles`, tsc source, offset policy */
	bool have_step;		/* the step-vs-oracle part ran */
	uint64_t step_guest[NSTEP_SIZES], step_oracle[NSTEP_SIZES];
	/* The step source's cost, by blocks from the code cache, by int3
	 * traps alone and by single-stepping (the counts must be equal),
	 * and the traps of the first two. */
	double step_wall[NSTEP_MODES][NSTEP_SIZES];
	double step_plain;			/* `vmm run` at tiny, uncounted */
	uint64_t step_single[NSTEP_SIZES];
	uint64_t step_int3[NSTEP_SIZES];
	uint64_t step_traps[NSTEP_MODES][NSTEP_SIZES];
	bool have_preempt;	/* the host-preemption part ran */
	double idle_cycles;	/* median idle offset count of those rounds */
	double preempt_ratio[NPREEMPT];	/* median loaded / idle offset, per round */
	bool have_kernel;	/* the kernel part ran */
	struct bench_kernel kern;
};

struct bench_results {
	const char *host;	/* host_kind_name() of the KVM it ran on */
	const char *size;
	int reps;
	int spinners;		/* host spinner processes of the preemption part */
	size_t n;
	struct bench_wl_result *wl;
};

/*
 * Counts back from text.  Each returns 0 and sets *out, or -1 when the
 * event is absent or not a plain count (e.g. "<not counted>").
 *   bench_parse_stat_csv:  `vmm stat -x,` lines "COUNT,UNIT,EVENT,..."
 *   bench_parse_stepcount: stepcount lines "EVENT COUNT"
 */
int bench_parse_stat_csv(const char *text, const char *event, uint64_t *out);
int bench_parse_stepcount(const char *text, const char *event, uint64_t *out);
/* `vmm stat --breakdown -x,` lines into k: 0, or -1 when a line is missing. */
int bench_parse_breakdown(const char *text, struct bench_kernel *k);

/* Step source minus oracle, at the tiny size alone (start-up included). */
int64_t bench_step_startup_diff(const struct bench_wl_result *r);
/*
 * (guest tiny - guest micro) - (oracle tiny - oracle micro): what the two
 * counts disagree on beyond start-up, which cancels.  Exactly 0 expected.
 */
int64_t bench_step_work_diff(const struct bench_wl_result *r);
/*
 * The step source's cost per user instruction at size tiny (its wall time
 * less that of the same run uncounted, so boot and the program's own time
 * drop out), in µs: mode 0 by blocks, 1 by single-stepping; and the user
 * instructions per block trap.
 */
double bench_step_us_per_insn(const struct bench_wl_result *r, int mode);
double bench_step_insns_per_trap(const struct bench_wl_result *r, int mode);

void bench_write_json(FILE *f, const struct bench_results *res);
void bench_write_csv(FILE *f, const struct bench_results *res);
/* "docs/results.png" -> "docs/results-time.png": the kernel part's chart. */
void bench_time_plot_name(const char *plot, char *buf, size_t len);
/* plot: the chart's file name to link, or NULL. */
void bench_write_markdown(FILE *f, const struct bench_results *res,
			  const char *plot);

#endif
