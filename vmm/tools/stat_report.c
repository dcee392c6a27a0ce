// SPDX-License-Identifier: MIT
/*
 * `vmm stat` output, after perf stat: the human table, `-x SEP` lines that
 * are byte-compatible with `perf stat -x` (count,unit,event,run-time,
 * percent,,; `<not supported>` where the source cannot count an event) and
 * `--json` objects with perf's field names.  With -r N, the mean and the
 * relative standard deviation over the runs.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "boot.h"
#include "boot_load.h"
#include "breakdown.h"
#include "pmu.h"
#include "stat.h"
#include "stat_report.h"
#include "vpmu.h"

void stat_default_events(struct vmm_stat *st, const char *source)
{
	static const char *const tsc[] = { "cycles", "ref-cycles" };
	static const char *const step[] = { "instructions:u", "branches:u" };
	static const char *const other[] = { "task-clock" };
	const char *const *names = other;
	int n = 1;

	if (!strcmp(source, "tsc"))
		names = tsc, n = 2;
	else if (!strcmp(source, "step"))
		names = step, n = 2;
	for (int i = 0; i < n; i++) {
		char buf[48], *mods;

		snprintf(buf, sizeof(buf), "%s", names[i]);
		snprintf(st->names[i], sizeof(st->names[i]), "%s", names[i]);
		mods = strchr(buf, ':');
		st->mode[i] = mods ? PMU_MODE_USR : PMU_MODE_ALL;
		if (mods)
			*mods = 0;
		pmu_event_lookup(buf, &st->event[i]);
	}
	st->nevents = n;
}

static void stat_thread_exit(void *ctx, const struct pv_stat_record *r)
{
	struct stat_run *run = ctx;

	stat_record_add(run, run->st, r);
}

/* --breakdown: the VMM's time for each exit. */
static void stat_exit_time(void *ctx, int cpu, uint32_t exit_reason,
			   int hypercall, uint64_t time_ns, uint64_t cycles)
{
	struct stat_run *run = ctx;

	(void)cpu;
	(void)time_ns;
	breakdown_exit(run->bd, exit_reason, hypercall, cycles);
}

static void stat_exit_mode(void *ctx, int cpu, uint32_t exit_reason,
			   int mode, uint64_t rip)
{
	struct stat_run *run = ctx;

	breakdown_exit_mode(run->bd, cpu, exit_reason, mode, rip);
}

/* The conservation check's material: what the vCPUs counted in all. */
static void stat_vm_end(void *ctx, const struct vm *vm)
{
	struct stat_run *run = ctx;

	if (run->bd)
		breakdown_vm_end(run->bd, vm);

	for (int c = 0; c < vm->ncpus; c++) {
		struct pmu_vcpu_stats ps;

		pmu_vcpu_get_stats(vm->vcpus[c].pmu.pv, &ps);
		run->switch_hcalls += ps.switch_hcalls;
		run->guest_switches += ps.guest_switch_count;
	}
	for (int i = 0; i < run->st->nevents; i++)
		for (int c = 0; run->slot[i] >= 0 && c < vm->ncpus; c++)
			run->vcpu_total[i] += pmu_vcpu_counter(
				vm->vcpus[c].pmu.pv, run->slot[i]);
}

const struct vm_observer *stat_prepare(const struct vmm_stat *st,
				       struct pmu *pmu, struct boot_pmu *bpmu,
				       struct stat_run *run)
{
	uint32_t n = 0;

	memset(run, 0, sizeof(*run));
	for (int i = 0; i < st->nevents; i++) {
		run->slot[i] = -1;
		run->supported[i] = pmu_event_supported(pmu, st->event[i],
							st->mode[i]);
		if (!run->supported[i])
			continue;
		bpmu->stat_evtsel[n] = boot_evtsel(st->event[i], st->mode[i]);
		run->slot[i] = n++;
	}
	bpmu->stat_nr = n;
	run->st = st;
	run->observer = (struct vm_observer){
		.ctx = run,
		.thread_exit = stat_thread_exit,
		.end = stat_vm_end,
	};
	if (st->breakdown) {
		run->bd = calloc(1, sizeof(*run->bd));
		if (run->bd) {
			run->observer.exit_time = stat_exit_time;
			run->observer.exit_mode = stat_exit_mode;
		}
	}
	return &run->observer;
}

void stat_record_add(struct stat_run *run, const struct vmm_stat *st,
		     const struct pv_stat_record *r)
{
	struct stat_thread *t;

	if (run->nthreads == run->cap) {
		int cap = run->cap ? 2 * run->cap : 16;
		void *p = realloc(run->threads, cap * sizeof(*t));

		if (!p)
			return;
		run->threads = p;
		run->cap = cap;
	}
	t = &run->threads[run->nthreads++];
	memset(t, 0, sizeof(*t));
	t->pid = r->pid;
	t->tid = r->tid;
	memcpy(t->comm, r->comm, sizeof(t->comm));
	t->comm[sizeof(t->comm) - 1] = 0;
	t->run_ns = r->run_ns;
	t->switches = r->switches;
	for (int i = 0; i < st->nevents; i++)
		if (run->slot[i] >= 0)
			t->count[i] = r->count[run->slot[i]];
}

void stat_run_free(struct stat_run *run)
{
	free(run->threads);
	free(run->bd);
	run->bd = NULL;
	run->threads = NULL;
	run->nthreads = run->cap = 0;
}

/* 1234567 -> "1,234,567" */
static void fmt_thousands(char *buf, size_t n, uint64_t v)
{
	char tmp[32];
	int len = snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)v);
	size_t o = 0;

	for (int i = 0; i < len && o + 2 < n; i++) {
		buf[o++] = tmp[i];
		if ((len - i - 1) % 3 == 0 && i != len - 1)
			buf[o++] = ',';
	}
	buf[o] = 0;
}

static void totals(const struct stat_run *run, int nev, uint64_t *sum,
		   uint64_t *run_ns)
{
	memset(sum, 0, nev * sizeof(*sum));
	*run_ns = 0;
	for (int t = 0; t < run->nthreads; t++) {
		for (int i = 0; i < nev; i++)
			sum[i] += run->threads[t].count[i];
		*run_ns += run->threads[t].run_ns;
	}
}

/* One output line (a total or a thread's row). */
static void stat_line(FILE *f, const struct vmm_config *cfg, const char *who,
		      bool supported, const char *event, double value,
		      uint64_t run_ns, double rel_stddev)
{
	const struct vmm_stat *st = &cfg->stat;
	char num[40];

	if (st->json) {
		fprintf(f, "{");
		if (who)
			fprintf(f, "\"thread\" : \"%s\", ", who);
		if (supported)
			fprintf(f, "\"counter-value\" : \"%f\", ", value);
		else
			fprintf(f, "\"counter-value\" : \"<not supported>\", ");
		fprintf(f, "\"unit\" : \"\", \"event\" : \"%s\", "
			"\"event-runtime\" : %llu, \"pcnt-running\" : %.2f",
			event, (unsigned long long)run_ns, supported ? 100.0 : 0);
		if (st->repeat > 1)
			fprintf(f, ", \"variance\" : %.2f", rel_stddev);
		fprintf(f, "}\n");
		return;
	}
	if (st->sep) {
		const char *s = st->sep;

		if (who)
			fprintf(f, "%s%s", who, s);
		if (supported)
			fprintf(f, "%.0f", value);
		else
			fprintf(f, "<not supported>");
		fprintf(f, "%s%s%s%s", s, s, event, s);
		if (st->repeat > 1 && supported)
			fprintf(f, "%.2f%%%s", rel_stddev, s);
		fprintf(f, "%llu%s%.2f%s%s\n", (unsigned long long)run_ns, s,
			supported ? 100.0 : 0, s, s);
		return;
	}
	if (supported)
		fmt_thousands(num, sizeof(num), (uint64_t)(value + 0.5));
	else
		snprintf(num, sizeof(num), "<not supported>");
	if (who)
		fprintf(f, "%16s ", who);
	fprintf(f, "%18s      %s", num, event);
	if (st->repeat > 1 && supported)
		fprintf(f, "  ( +- %5.2f%% )", rel_stddev);
	fprintf(f, "\n");
}

void stat_print(FILE *f, const struct vmm_config *cfg,
		const struct stat_run *runs, int nruns)
{
	const struct vmm_stat *st = &cfg->stat;
	const struct stat_run *last = &runs[nruns - 1];
	bool human = !st->json && !st->sep;
	uint64_t sum[VMM_STAT_EVENTS], run_ns;
	double mean[VMM_STAT_EVENTS] = { 0 }, sq[VMM_STAT_EVENTS] = { 0 };
	double el = 0;

	for (int r = 0; r < nruns; r++) {
		totals(&runs[r], st->nevents, sum, &run_ns);
		for (int i = 0; i < st->nevents; i++) {
			mean[i] += (double)sum[i] / nruns;
			sq[i] += (double)sum[i] * sum[i] / nruns;
		}
		el += runs[r].elapsed_s / nruns;
	}
	if (human) {
		fprintf(f, "\n Performance counter stats for '");
		for (int i = 0; i < cfg->argc; i++)
			fprintf(f, "%s%s", i ? " " : "", cfg->argv[i]);
		fprintf(f, "' (source %s, policy %s", cfg->source, cfg->policy);
		if (nruns > 1)
			fprintf(f, ", %d runs", nruns);
		fprintf(f, "):\n\n");
	}
	if (st->per_thread) {
		for (int t = 0; t < last->nthreads; t++) {
			const struct stat_thread *th = &last->threads[t];
			char who[40];

			snprintf(who, sizeof(who), "%s-%d", th->comm, th->tid);
			for (int i = 0; i < st->nevents; i++)
				stat_line(f, cfg, who, last->supported[i],
					  st->names[i], th->count[i], th->run_ns,
					  0);
		}
	} else {
		totals(last, st->nevents, sum, &run_ns);
		for (int i = 0; i < st->nevents; i++) {
			double var = sq[i] - mean[i] * mean[i];
			double rel = mean[i] > 0 && var > 0 ?
				     100.0 * sqrt(var / (nruns > 1 ? nruns - 1 : 1)
						 * nruns) / mean[i] / sqrt(nruns) : 0;

			stat_line(f, cfg, NULL, last->supported[i],
				  st->names[i], mean[i], run_ns, rel);
		}
	}
	if (human)
		fprintf(f, "\n %17.9f seconds time elapsed\n\n", el);
	/* Of the last run: counts of kinds, not one number to average. */
	if (last->bd)
		breakdown_print(f, st, last->bd);
	/* -v: the threads' sum against the vCPUs' totals (conservation:
	 * equal for user-only step counts, where nothing else runs). */
	if (cfg->verbose) {
		uint64_t sw = 0;

		for (int t = 0; t < last->nthreads; t++)
			sw += last->threads[t].switches;
		/* What a policy costs: VMM exits per guest thread switch;
		 * the guest's count takes in switches to and from idle. */
		fprintf(stderr, "vmm: stat: %llu thread switches, %llu switch "
			"hypercalls (%.3f per switch), %llu counted by the "
			"guest\n", (unsigned long long)sw,
			(unsigned long long)last->switch_hcalls,
			sw ? (double)last->switch_hcalls / sw : 0.0,
			(unsigned long long)last->guest_switches);
		totals(last, st->nevents, sum, &run_ns);
		for (int i = 0; i < st->nevents; i++)
			if (last->supported[i])
				fprintf(stderr, "vmm: stat: %s: threads %llu, "
					"vcpus %llu\n", st->names[i],
					(unsigned long long)sum[i],
					(unsigned long long)last->vcpu_total[i]);
	}
}
