// SPDX-License-Identifier: MIT
/*
 * vmm bench: benchmarks that print numbers (never pass/fail on time: these
 * machines are shared and noisy).
 *
 *   vmm bench boot [-n N] [--json] PROGRAM
 *	wall time of `vmm run PROGRAM` (a program that exits at once) and the
 *	VMM's resident memory beyond the guest RAM it touched, medians of N.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "bench.h"
#include "config.h"

#define BENCH_EXIT_EXEC		127	/* as the shell: the command would not run */

double bench_now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static double now_ms(void)
{
	return bench_now_s() * 1e3;
}

int bench_run(char *const argv[], bool no_aslr, int err_fd,
	      struct bench_run *out)
{
	unsigned long long tsc0;
	struct rusage ru;
	double t0;
	int st;
	pid_t pid;

	fflush(stdout);		/* or the child flushes our buffer too */
	t0 = bench_now_s();
	tsc0 = __rdtsc();
	pid = fork();
	if (pid == 0) {
		if (!freopen("/dev/null", "w", stdout) ||
		    (err_fd < 0 ? !freopen("/dev/null", "w", stderr) :
				  dup2(err_fd, 2) < 0))
			_exit(VMM_EXIT_ERROR);
		if (no_aslr && personality(ADDR_NO_RANDOMIZE) < 0)
			_exit(VMM_EXIT_ERROR);
		execv(argv[0], argv);
		_exit(BENCH_EXIT_EXEC);
	}
	if (pid < 0 || wait4(pid, &st, 0, &ru) < 0 || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0)
		return -1;
	out->tsc = __rdtsc() - tsc0;
	out->wall_s = bench_now_s() - t0;
	out->cpu_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
		     ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int bench_self(char *self, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", self, len - 1);

	if (n <= 0)
		return -1;
	self[n] = 0;
	return 0;
}

bool bench_wl_selected(const char *list, const char *wl)
{
	size_t len = strlen(wl);

	for (const char *p = list; p; p = strchr(p, ',')) {
		p += *p == ',';
		if (!strncmp(p, wl, len) && (p[len] == ',' || !p[len]))
			return true;
	}
	return !list;
}

double bench_median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One `vmm run` in a child; its report gives RSS and guest-resident KiB. */
static int bench_boot_once(const char *prog, double *ms, double *rss_kb,
			   double *overhead_kb)
{
	char fdarg[16];
	long rss = 0, guest = 0;
	int pfd[2], status;
	double t0;
	pid_t pid;
	FILE *f;

	if (pipe(pfd))
		return -1;
	snprintf(fdarg, sizeof(fdarg), "%d", pfd[1]);
	t0 = now_ms();
	pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		execl("/proc/self/exe", "vmm", "run", "--mem", "64M",
		      "--report-fd", fdarg, "--", prog, (char *)NULL);
		_exit(VMM_EXIT_ERROR);
	}
	close(pfd[1]);
	if (pid < 0) {
		close(pfd[0]);
		return -1;
	}
	f = fdopen(pfd[0], "r");
	if (!f || fscanf(f, "%ld %ld", &rss, &guest) != 2)
		rss = -1;
	if (f)
		fclose(f);
	else
		close(pfd[0]);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0 || rss < 0)
		return -1;
	*ms = now_ms() - t0;
	*rss_kb = rss;
	*overhead_kb = rss - guest;
	return 0;
}

static int bench_boot(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	double *ms, *rss, *ovh, med_ms;
	bool json = false;
	int n = 20, c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "n:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			n = atoi(optarg);
			if (n < 1 || n > 10000) {
				fprintf(stderr, "vmm: bench boot: -n takes 1 "
					"to 10000\n");
				return VMM_EXIT_ERROR;
			}
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			puts("usage: vmm bench boot [-n N] [--json] PROGRAM");
			return 0;
		default:
			fprintf(stderr, "vmm: bench boot: bad option\n");
			return VMM_EXIT_ERROR;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "vmm: bench boot: give one PROGRAM that exits "
			"at once\n");
		return VMM_EXIT_ERROR;
	}
	ms = calloc(n, sizeof(*ms));
	rss = calloc(n, sizeof(*rss));
	ovh = calloc(n, sizeof(*ovh));
	for (int i = 0; i < n; i++) {
		if (bench_boot_once(argv[optind], &ms[i], &rss[i], &ovh[i])) {
			fprintf(stderr, "vmm: bench boot: run %d of %s failed\n",
				i, argv[optind]);
			return VMM_EXIT_ERROR;
		}
	}
	med_ms = bench_median(ms, n);	/* sorts: ms[0] is the minimum after this */
	if (json)
		printf("{\"runs\": %d, \"boot_ms_median\": %.2f, "
		       "\"boot_ms_min\": %.2f, \"rss_kib_median\": %.0f, "
		       "\"vmm_overhead_kib_median\": %.0f}\n", n,
		       med_ms, ms[0], bench_median(rss, n), bench_median(ovh, n));
	else
		printf("boot to exit (vmm run, 64 MiB guest): median %.2f ms, "
		       "min %.2f ms over %d runs\n"
		       "resident memory: median %.0f KiB, of which VMM overhead "
		       "beyond guest RAM touched %.0f KiB\n",
		       med_ms, ms[0], n, bench_median(rss, n), bench_median(ovh, n));
	free(ms);
	free(rss);
	free(ovh);
	return 0;
}

/*
 * Counter read costs measured inside the guest by the libvpmu test program
 * (tests/guest/vpmu_test readcost), which prints one JSON object.
 */
static int bench_read_cost(int argc, char **argv)
{
	char self[4096], prog[4200];
	const char *p = NULL;
	ssize_t n;

	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--json"))
			p = argv[i];
	if (!p) {
		/* Next to vmm in the build tree. */
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n <= 0)
			return VMM_EXIT_ERROR;
		self[n] = 0;
		*strrchr(self, '/') = 0;
		snprintf(prog, sizeof(prog), "%s/../tests/guest/vpmu_test", self);
		p = prog;
	}
	fflush(stdout);
	execl("/proc/self/exe", "vmm", "run", "--timeout", "300", "--", p,
	      "readcost", (char *)NULL);
	fprintf(stderr, "vmm: bench read-cost: cannot run %s\n", p);
	return VMM_EXIT_ERROR;
}

int cmd_bench(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "boot"))
		return bench_boot(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "read-cost"))
		return bench_read_cost(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "suite"))
		return bench_suite(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "overhead"))
		return bench_overhead(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "record"))
		return bench_record(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "report")) {
		/* Regenerate docs/results.{md,json,csv,png} (run from the
		 * source tree). */
		char *args[] = { "suite", "--size", "train", "--reps", "3",
				 "--markdown", "docs/results.md", "--json",
				 "docs/results.json", "--csv", "docs/results.csv",
				 "--plot", "docs/results.png", NULL };

		return bench_suite(13, args);
	}
	if (argc >= 2 && !strcmp(argv[1], "--list")) {
		puts("boot       boot-to-exit time and VMM memory overhead\n"
		     "read-cost  counter read costs inside the guest\n"
		     "overhead   what counting with tsc/offset, or exact counts\n"
		     "           with step, cost a CPU-bound program: paired\n"
		     "           runs, wall ratio and VM exits\n"
		     "record     what sampling costs the single-threaded workloads:\n"
		     "           record at 1 and 10 kHz, by the VMM and in the\n"
		     "           guest, against run, wall ratios in each round\n"
		     "suite      workloads: overhead per policy, step source against\n"
		     "           the ptrace oracle, cycles against native TSC and\n"
		     "           under host preemption, where the time goes\n"
		     "report     the suite into docs/results.{md,json,csv,png}");
		return 0;
	}
	fprintf(stderr, "usage: vmm bench boot [-n N] [--json] PROGRAM\n"
		"       vmm bench read-cost [--json] [VPMU_TEST_PROGRAM]\n"
		"       vmm bench overhead [-n PAIRS] [--source tsc|step] [--json]\n"
		"                          [PROGRAM ARGS...]\n"
		"       vmm bench record [-n ROUNDS] [--size S] [--workloads W,...]"
		" [--json]\n"
		"       vmm bench suite [--size S] [--reps N] [--parts P,...]"
		" [--workloads W,...]\n"
		"                       [--json F] [--csv F] [--markdown F]"
		" [--plot F]\n"
		"       vmm bench report   (regenerates docs/results.*)\n"
		"       vmm bench --list\n");
	return argc >= 2 && !strcmp(argv[1], "--help") ? 0 : VMM_EXIT_ERROR;
}
