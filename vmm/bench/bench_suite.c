// SPDX-License-Identifier: MIT
/*
 * vmm bench suite: each workload, in three parts, all in one run (the
 * machines are shared and noisy: only ratios within one run mean
 * anything):
 *
 *   overhead  natively, in the guest without counting, and in the guest
 *             counting cycles with each policy, interleaved and repeated;
 *             the offset runs' cycles also go against the native run's TSC
 *   step      `--source step` instructions:u against the ptrace oracle
 *             (tests/tools/stepcount) at sizes micro and tiny
 *   preempt   cycles with each policy while spinners oversubscribe the
 *             host, against an idle offset run in the same round
 *   kernel    where the time goes: one `vmm stat --breakdown` run (guest,
 *             VMM and halted time, KVM's statistics, kernel entries)
 *
 * Prints a summary; writes JSON, CSV and Markdown (docs/results.md through
 * `vmm bench report`).  bench_results.c formats, this file runs things.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "host.h"
#include "bench_results.h"
#include "config.h"

static const char *const wl_names[] = {
	"mcf", "bzip2", "hmmer", "sjeng", "libquantum", "lbm", "spmv", "nbody",
};
/* vCPUs for the timed runs: as many as the cores the native run uses
 * (nbody's 4 threads share this machine's 2).  The step part stays on
 * one, where its counts are exact. */
static const char *const wl_cpus[] = {
	"1", "1", "1", "1", "1", "1", "1", "2",
};
#define NWL (sizeof(wl_names) / sizeof(wl_names[0]))
#define MAX_REPS 100

enum {
	PART_OVERHEAD = 1, PART_STEP = 2, PART_PREEMPT = 4, PART_KERNEL = 8,
	PART_ALL = 15
};

struct suite {
	char self[4096];	/* this vmm */
	char oracle[4200];	/* stepcount */
	char wldir[4200];	/* the workloads' musl binaries */
	char prog[4400];	/* the current workload's */
	char base[256];		/* its basename: the guest's argv[0] */
	char tmpdir[32];	/* count files */
	char countfile[64];
	const char *size;
	const char *cpus;	/* the current workload's --cpus */
	int reps, parts, spinners;
	size_t w;		/* the current workload */
};

/* The count file's contents, NUL-terminated, in buf. */
static int countfile_read(const struct suite *s, char *buf, size_t len)
{
	FILE *f = fopen(s->countfile, "r");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, len - 1, f);
	buf[n] = 0;
	fclose(f);
	return 0;
}

/*
 * `vmm stat -x, -o COUNTFILE -e EVENT --policy P --source SRC PROG SIZE`:
 * the event's count in *count, the run in *out.
 */
static int suite_stat(const struct suite *s, const char *policy,
		      const char *source, const char *event, const char *size,
		      uint64_t *count, struct bench_run *out)
{
	char *argv[] = { (char *)s->self, "stat", "-x,", "-o",
			 (char *)s->countfile, "-e", (char *)event, "--policy",
			 (char *)policy, "--source", (char *)source, "--cpus",
			 strcmp(source, "step") ? (char *)s->cpus : "1",
			 (char *)s->prog, (char *)size, NULL };
	char text[4096];

	if (bench_run(argv, false, -1, out) || countfile_read(s, text, sizeof(text)))
		return -1;
	return bench_parse_stat_csv(text, event, count);
}

/* stepcount's instructions:u of PROG SIZE, invoked as the guest does. */
static int suite_oracle(const struct suite *s, const char *size,
			uint64_t *count)
{
	char *argv[] = { (char *)s->oracle, "--argv0", (char *)s->base, "-o",
			 (char *)s->countfile, "--", (char *)s->prog,
			 (char *)size, NULL };
	char text[4096];
	struct bench_run out;

	if (bench_run(argv, true, -1, &out) || countfile_read(s, text, sizeof(text)))
		return -1;
	return bench_parse_stepcount(text, "instructions:u", count);
}

/* Progress on a terminal only: logs stay clean. */
static void suite_progress(const struct suite *s, const char *part, int r)
{
	if (isatty(2))
		fprintf(stderr, "\r[%zu/%zu] %-10s %-8s %d/%d ", s->w + 1, NWL,
			wl_names[s->w], part, r + 1, s->reps);
}

static void suite_progress_end(void)
{
	if (isatty(2))
		fprintf(stderr, "\r%50s\r", "");
}

static int suite_fail(const char *wl, const char *what)
{
	suite_progress_end();
	fprintf(stderr, "vmm: bench suite: %s failed (%s)\n", wl, what);
	return -1;
}

static int suite_overhead(const struct suite *s, struct bench_wl_result *r)
{
	double t[NCFG][MAX_REPS], tsc[MAX_REPS], cyc[MAX_REPS];

	for (int i = 0; i < s->reps; i++) {
		suite_progress(s, "overhead", i);
		for (int k = 0; k < NCFG; k++) {
			char *nat[] = { (char *)s->prog, (char *)s->size, NULL };
			char *run[] = { (char *)s->self, "run", "--cpus",
					(char *)s->cpus, (char *)s->prog,
					(char *)s->size, NULL };
			struct bench_run o;
			uint64_t c = 0;
			int e;

			/* The same static musl binary everywhere. */
			if (k == CFG_NATIVE)
				e = bench_run(nat, false, -1, &o);
			else if (k == CFG_GUEST)
				e = bench_run(run, false, -1, &o);
			else
				e = suite_stat(s, bench_cfg_names[k], "tsc",
					       "cycles", s->size, &c, &o);
			if (e)
				return suite_fail(r->name, bench_cfg_names[k]);
			t[k][i] = o.wall_s;
			/* Several threads: guest cycles sum the vCPUs,
			 * so the native side is its CPU time in ticks. */
			if (k == CFG_NATIVE)
				tsc[i] = strcmp(s->cpus, "1") ?
					 o.cpu_s * o.tsc / o.wall_s : o.tsc;
			if (k == CFG_OFFSET)
				cyc[i] = c;
		}
	}
	for (int k = 0; k < NCFG; k++)
		r->time_s[k] = bench_median(t[k], s->reps);
	r->native_tsc = bench_median(tsc, s->reps);
	r->guest_cycles = bench_median(cyc, s->reps);
	r->have_overhead = true;
	return 0;
}

/*
 * `vmm stat -v --source step --step-mode MODE`: the count, the wall time
 * and (by blocks) the traps, which -v reports on stderr.
 */
static int suite_step_run(const struct suite *s, const char *mode,
			  const char *size, uint64_t *count, double *wall,
			  uint64_t *traps)
{
	char *argv[] = { (char *)s->self, "stat", "-v", "-x,", "-o",
			 (char *)s->countfile, "-e", "instructions:u",
			 "--source", "step", "--step-mode", (char *)mode,
			 (char *)s->prog, (char *)size, NULL };
	char text[4096], line[512];
	unsigned long long t;
	struct bench_run o;
	FILE *err = tmpfile();
	int ret = -1;

	if (!err)
		return -1;
	if (!bench_run(argv, false, fileno(err), &o) &&
	    !countfile_read(s, text, sizeof(text)) &&
	    !bench_parse_stat_csv(text, "instructions:u", count)) {
		*wall = o.wall_s;
		*traps = 0;
		rewind(err);
		while (fgets(line, sizeof(line), err))
			if (sscanf(line, "vmm: step blocks: %llu traps", &t) == 1)
				*traps = t;
		ret = 0;
	}
	fclose(err);
	return ret;
}

/*
 * Counts are exact: one run of each size and each side suffices, by
 * blocks and by single-stepping (the same counts where the workload's
 * path does not depend on timing: nbody's threads do).
 */
static int suite_step(const struct suite *s, struct bench_wl_result *r)
{
	char *plain[] = { (char *)s->self, "run", (char *)s->prog,
			  (char *)bench_step_sizes[STEP_TINY], NULL };
	struct bench_run o;

	if (bench_run(plain, false, -1, &o))
		return suite_fail(r->name, "uncounted run");
	r->step_plain = o.wall_s;
	for (int z = 0; z < NSTEP_SIZES; z++) {
		const char *size = bench_step_sizes[z];
		uint64_t none;

		if (suite_step_run(s, "block", size, &r->step_guest[z],
				   &r->step_wall[STEP_CACHE][z],
				   &r->step_traps[STEP_CACHE][z]))
			return suite_fail(r->name, "step source");
		if (suite_step_run(s, "int3", size, &r->step_int3[z],
				   &r->step_wall[STEP_INT3][z],
				   &r->step_traps[STEP_INT3][z]))
			return suite_fail(r->name, "step source, int3");
		if (suite_step_run(s, "single", size, &r->step_single[z],
				   &r->step_wall[STEP_SINGLE][z], &none))
			return suite_fail(r->name, "step source, single");
		if (suite_oracle(s, size, &r->step_oracle[z]))
			return suite_fail(r->name, "stepcount oracle");
	}
	r->have_step = true;
	return 0;
}

/* Spinners until spinners_stop; they die with us in any case. */
static void spinners_start(pid_t *pids, int n)
{
	for (int i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			alarm(600);
			for (;;)
				;
		}
	}
	/* Let the host scheduler spread them before the measured run. */
	nanosleep(&(struct timespec){ .tv_nsec = 200000000 }, NULL);
}

static void spinners_stop(pid_t *pids, int n)
{
	for (int i = 0; i < n; i++) {
		if (pids[i] > 0) {
			kill(pids[i], SIGKILL);
			waitpid(pids[i], NULL, 0);
		}
	}
}

/*
 * Rounds of: the offset count on the idle host, then each policy's count
 * with the host oversubscribed.  Ratios are taken within a round, where
 * the host's background load is most alike.
 */
static int suite_preempt(const struct suite *s, struct bench_wl_result *r)
{
	static const char *const pol[NPREEMPT] = { "offset", "saverestore", "raw" };
	double ratio[NPREEMPT][MAX_REPS], idle[MAX_REPS];
	pid_t pids[64];

	for (int i = 0; i < s->reps; i++) {
		struct bench_run o;
		uint64_t c0, c;

		suite_progress(s, "preempt", i);

		if (suite_stat(s, "offset", "tsc", "cycles", s->size, &c0, &o))
			return suite_fail(r->name, "idle offset");
		idle[i] = c0;
		spinners_start(pids, s->spinners);
		for (int k = 0; k < NPREEMPT; k++) {
			if (suite_stat(s, pol[k], "tsc", "cycles", s->size, &c,
				       &o)) {
				spinners_stop(pids, s->spinners);
				return suite_fail(r->name, pol[k]);
			}
			ratio[k][i] = (double)c / c0;
		}
		spinners_stop(pids, s->spinners);
	}
	for (int k = 0; k < NPREEMPT; k++)
		r->preempt_ratio[k] = bench_median(ratio[k], s->reps);
	r->idle_cycles = bench_median(idle, s->reps);
	r->have_preempt = true;
	return 0;
}

/*
 * One run: the entry counts are exact and the same from run to run, and
 * the times are those of this run, whose parts add up.  No counter is
 * asked for (task-clock is not counted by the tsc source), so nothing
 * but the breakdown's own registration adds to what it shows.
 */
static int suite_kernel(const struct suite *s, struct bench_wl_result *r)
{
	char *argv[] = { (char *)s->self, "stat", "--breakdown", "-x,", "-o",
			 (char *)s->countfile, "-e", "task-clock", "--source",
			 "tsc", "--cpus", (char *)s->cpus, (char *)s->prog,
			 (char *)s->size, NULL };
	static char text[65536];
	struct bench_run o;

	suite_progress(s, "kernel", 0);
	if (bench_run(argv, false, -1, &o) ||
	    countfile_read(s, text, sizeof(text)) ||
	    bench_parse_breakdown(text, &r->kern))
		return suite_fail(r->name, "kernel breakdown");
	r->have_kernel = true;
	return 0;
}

static void suite_print(const struct bench_wl_result *r)
{
	printf("%-11s", r->name);
	if (r->have_overhead)
		printf(" %7.3f %7.3f %7.3f %7.3f %7.3f  g/n %.2f  cyc/tsc %.3f",
		       r->time_s[0], r->time_s[1], r->time_s[2], r->time_s[3],
		       r->time_s[4], r->time_s[1] / r->time_s[0],
		       r->guest_cycles / r->native_tsc);
	if (r->have_step)
		printf("  step %llu/%llu start-up %lld work %lld",
		       (unsigned long long)r->step_guest[STEP_TINY],
		       (unsigned long long)r->step_oracle[STEP_TINY],
		       (long long)bench_step_startup_diff(r),
		       (long long)bench_step_work_diff(r));
	if (r->have_step)
		printf("  us/insn cache %.3f int3 %.2f single %.2f "
		       "insns/trap cache %.1f int3 %.1f%s",
		       bench_step_us_per_insn(r, STEP_CACHE),
		       bench_step_us_per_insn(r, STEP_INT3),
		       bench_step_us_per_insn(r, STEP_SINGLE),
		       bench_step_insns_per_trap(r, STEP_CACHE),
		       bench_step_insns_per_trap(r, STEP_INT3),
		       r->step_single[STEP_TINY] == r->step_guest[STEP_TINY] &&
		       r->step_int3[STEP_TINY] == r->step_guest[STEP_TINY] ?
		       "" : " (the modes counted differently)");
	if (r->have_preempt)
		printf("  loaded/idle %.2f %.2f %.2f", r->preempt_ratio[0],
		       r->preempt_ratio[1], r->preempt_ratio[2]);
	if (r->have_kernel)
		printf("  user/kernel/vmm ms %.1f/%.1f/%.1f kinsns %llu sys %llu "
		       "pf %llu", r->kern.user_ns / 1e6, r->kern.kernel_ns / 1e6,
		       r->kern.vmm_ns / 1e6,
		       (unsigned long long)r->kern.kernel_insns,
		       (unsigned long long)r->kern.syscalls,
		       (unsigned long long)r->kern.page_faults);
	printf("\n");
	fflush(stdout);
}

/* A bar chart of each configuration's time relative to native. */
static void suite_plot(const struct bench_results *res, const char *plot)
{
	FILE *f = popen("gnuplot > /dev/null 2>&1", "w");

	if (!f)
		return;
	fprintf(f, "set terminal png size 900,420\n"
		"set output '%s'\nset style data histogram\n"
		"set style histogram clustered\n"
		"set style fill solid 0.8\nset key top left\n"
		"set ylabel 'wall time / native'\n"
		"set title 'perfvisor: guest and counting overhead "
		"(size %s, median of %d)'\n"
		"plot '-' using 2:xtic(1) title 'guest', "
		"'' using 3 title 'offset', "
		"'' using 4 title 'saverestore', "
		"'' using 5 title 'raw'\n", plot, res->size, res->reps);
	for (int k = 1; k < NCFG; k++) {
		for (size_t w = 0; w < res->n; w++) {
			const double *t = res->wl[w].time_s;

			fprintf(f, "%s", res->wl[w].name);
			for (int j = 1; j < NCFG; j++)
				fprintf(f, " %.3f", t[j] / t[0]);
			fprintf(f, "\n");
		}
		fprintf(f, "e\n");
	}
	if (pclose(f))
		fprintf(stderr, "vmm: bench suite: gnuplot failed; no plot\n");
}

/* The kernel part: each workload's vCPU time, stacked by where it went. */
static void suite_plot_time(const struct bench_results *res, const char *plot)
{
	FILE *f = popen("gnuplot > /dev/null 2>&1", "w");
	char name[4096];

	if (!f)
		return;
	bench_time_plot_name(plot, name, sizeof(name));
	fprintf(f, "set terminal png size 900,420\n"
		"set output '%s'\nset style data histogram\n"
		"set style histogram rowstacked\nset boxwidth 0.6\n"
		"set style fill solid 0.8\nset key top right\n"
		"set ylabel 'ms of vCPU time'\n"
		"set title 'perfvisor: where the time goes (size %s; user "
		"and kernel sampled)'\n"
		"plot '-' using 2:xtic(1) title 'user', '' using 3 title "
		"'kernel (emulated)', '' using 4 title 'VMM (exits)', "
		"'' using 5 title 'halted'\n", name, res->size);
	for (int k = 0; k < 4; k++) {
		for (size_t w = 0; w < res->n; w++) {
			const struct bench_kernel *t = &res->wl[w].kern;

			fprintf(f, "%s %.3f %.3f %.3f %.3f\n",
				res->wl[w].name, t->user_ns / 1e6,
				t->kernel_ns / 1e6, t->vmm_ns / 1e6,
				t->halted_ns / 1e6);
		}
		fprintf(f, "e\n");
	}
	if (pclose(f))
		fprintf(stderr, "vmm: bench suite: gnuplot failed; no plot\n");
}

/* "overhead,step" -> PART_OVERHEAD | PART_STEP; -1 on an unknown part. */
static int parts_parse(const char *list)
{
	static const char *const names[] = {
		"overhead", "step", "preempt", "kernel",
	};
	char buf[256], *save, *tok;
	int parts = 0;

	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		size_t i;

		for (i = 0; i < 4 && strcmp(tok, names[i]); i++)
			;
		if (i == 4)
			return -1;
		parts |= 1 << i;
	}
	return parts ? parts : -1;
}

static int suite_paths(struct suite *s, const char *oracle)
{
	ssize_t n = readlink("/proc/self/exe", s->self, sizeof(s->self) - 1);
	char dir[4096];

	if (n <= 0)
		return -1;
	s->self[n] = 0;
	snprintf(dir, sizeof(dir), "%s", s->self);
	*strrchr(dir, '/') = 0;
	/* Next to vmm in the build tree. */
	if (oracle)
		snprintf(s->oracle, sizeof(s->oracle), "%s", oracle);
	else
		snprintf(s->oracle, sizeof(s->oracle), "%s/../tests/tools/stepcount",
			 dir);
	if ((s->parts & PART_STEP) && access(s->oracle, X_OK)) {
		fprintf(stderr, "vmm: bench suite: %s: %s (--oracle)\n",
			s->oracle, strerror(errno));
		return -1;
	}
	snprintf(s->tmpdir, sizeof(s->tmpdir), "/tmp/vmm-bench-XXXXXX");
	if (!mkdtemp(s->tmpdir))
		return -1;
	snprintf(s->countfile, sizeof(s->countfile), "%s/counts", s->tmpdir);
	/* The workloads are found relative to vmm too. */
	snprintf(s->wldir, sizeof(s->wldir), "%s/../workloads", dir);
	return 0;
}

static int suite_workload(struct suite *s, size_t w,
			  struct bench_wl_result *r)
{
	_Static_assert(sizeof(wl_cpus) == sizeof(wl_names), "one per workload");
	s->w = w;
	s->cpus = wl_cpus[w];
	snprintf(s->prog, sizeof(s->prog), "%s/wl-%s.musl", s->wldir, wl_names[w]);
	snprintf(s->base, sizeof(s->base), "wl-%s.musl", wl_names[w]);
	r->name = wl_names[w];
	if ((s->parts & PART_OVERHEAD) && suite_overhead(s, r))
		return -1;
	suite_progress(s, "step", 0);
	if ((s->parts & PART_STEP) && suite_step(s, r))
		return -1;
	if ((s->parts & PART_PREEMPT) && suite_preempt(s, r))
		return -1;
	if ((s->parts & PART_KERNEL) && suite_kernel(s, r))
		return -1;
	suite_progress_end();
	suite_print(r);
	return 0;
}

static void suite_write(const struct bench_results *res, const char *json,
			const char *csv, const char *md, const char *plot)
{
	FILE *f;

	if (json && (f = fopen(json, "w"))) {
		bench_write_json(f, res);
		fclose(f);
	}
	if (csv && (f = fopen(csv, "w"))) {
		bench_write_csv(f, res);
		fclose(f);
	}
	if (plot && res->wl[0].have_overhead)
		suite_plot(res, plot);
	if (plot && res->wl[0].have_kernel)
		suite_plot_time(res, plot);
	if (md && (f = fopen(md, "w"))) {
		bench_write_markdown(f, res, plot ? (strrchr(plot, '/') ?
				     strrchr(plot, '/') + 1 : plot) : NULL);
		fclose(f);
	}
}

static void suite_usage(FILE *f)
{
	fputs("usage: vmm bench suite [--size micro|tiny|test|train|ref] "
	      "[--reps N]\n"
	      "         [--parts overhead,step,preempt,kernel] [--workloads NAME,...] "
	      "[--oracle STEPCOUNT]\n"
	      "         [--json F] [--csv F] [--markdown F] [--plot F.png]\n", f);
}

int bench_suite(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "size", required_argument, NULL, 's' },
		{ "reps", required_argument, NULL, 'n' },
		{ "parts", required_argument, NULL, 'P' },
		{ "workloads", required_argument, NULL, 'w' },
		{ "oracle", required_argument, NULL, 'O' },
		{ "json", required_argument, NULL, 'j' },
		{ "csv", required_argument, NULL, 'c' },
		{ "markdown", required_argument, NULL, 'm' },
		{ "plot", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *json = NULL, *csv = NULL, *md = NULL, *plot = NULL;
	const char *only = NULL, *oracle = NULL;
	struct suite s = { .size = "test", .reps = 3, .parts = PART_ALL };
	struct bench_wl_result wl[NWL] = { 0 };
	struct bench_results res = { .wl = wl };
	int c, ret = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "s:n:h", opts, NULL)) != -1) {
		switch (c) {
		case 's': s.size = optarg; break;
		case 'n': s.reps = atoi(optarg); break;
		case 'P': s.parts = parts_parse(optarg); break;
		case 'w': only = optarg; break;
		case 'O': oracle = optarg; break;
		case 'j': json = optarg; break;
		case 'c': csv = optarg; break;
		case 'm': md = optarg; break;
		case 'p': plot = optarg; break;
		case 'h':
			suite_usage(stdout);
			return 0;
		default:
			suite_usage(stderr);
			return VMM_EXIT_ERROR;
		}
	}
	if (s.reps < 1 || s.reps > MAX_REPS) {
		fprintf(stderr, "vmm: bench suite: --reps takes 1 to %d\n", MAX_REPS);
		return VMM_EXIT_ERROR;
	}
	if (s.parts < 0) {
		fprintf(stderr, "vmm: bench suite: --parts takes a list of "
			"overhead, step, preempt, kernel\n");
		return VMM_EXIT_ERROR;
	}
	/* One more CPU-bound process than the host has CPUs. */
	s.spinners = sysconf(_SC_NPROCESSORS_ONLN) + 1;
	if (s.spinners < 2 || s.spinners > 64)
		s.spinners = 3;
	if (suite_paths(&s, oracle))
		return VMM_EXIT_ERROR;
	res.host = host_kind_name(host_kind_detect());
	res.size = s.size;
	res.reps = s.reps;
	res.spinners = s.spinners;
	printf("size %s, median of %d; wall s native guest offset saverest. "
	       "raw; step guest/oracle at tiny; preempt loaded/idle offset "
	       "saverest. raw\n", s.size, s.reps);
	for (size_t w = 0; w < NWL && !ret; w++) {
		if (!bench_wl_selected(only, wl_names[w]))
			continue;
		ret = suite_workload(&s, w, &wl[res.n++]);
	}
	if (!ret && !res.n) {
		fprintf(stderr, "vmm: bench suite: --workloads selects none\n");
		ret = -1;
	}
	if (!ret)
		suite_write(&res, json, csv, md, plot);
	unlink(s.countfile);
	rmdir(s.tmpdir);
	return ret ? VMM_EXIT_ERROR : 0;
}
