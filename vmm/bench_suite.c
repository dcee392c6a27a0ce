// SPDX-License-Identifier: MIT
/*
 * vmm bench suite: each workload natively, in the guest without counting,
 * and in the guest counting cycles with each policy, interleaved and
 * repeated in one run (the machines are shared and noisy: only ratios
 * within one run mean anything).  Prints a table; writes JSON, CSV and a
 * Markdown table (docs/results.md with --markdown).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "config.h"

static const char *const wl_names[] = {
	"mcf", "bzip2", "hmmer", "sjeng", "libquantum", "lbm", "spmv", "nbody",
};
#define NWL (sizeof(wl_names) / sizeof(wl_names[0]))

enum { CFG_NATIVE, CFG_GUEST, CFG_OFFSET, CFG_SAVERESTORE, CFG_RAW, NCFG };
static const char *const cfg_names[NCFG] = {
	"native", "guest", "offset", "saverestore", "raw",
};

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Run argv with stdout and stderr to /dev/null; wall seconds or -1. */
static double run_timed(char *const argv[])
{
	double t0;
	int st;
	pid_t pid;

	fflush(stdout);		/* or the child flushes our buffer too */
	t0 = now_s();
	pid = fork();

	if (pid == 0) {
		if (!freopen("/dev/null", "w", stdout) ||
		    !freopen("/dev/null", "w", stderr))
			_exit(125);
		execv(argv[0], argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0)
		return -1;
	return now_s() - t0;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int bench_suite(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "size", required_argument, NULL, 's' },
		{ "reps", required_argument, NULL, 'n' },
		{ "json", required_argument, NULL, 'j' },
		{ "csv", required_argument, NULL, 'c' },
		{ "markdown", required_argument, NULL, 'm' },
		{ "plot", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *size = "test", *json = NULL, *csv = NULL, *md = NULL;
	const char *plot = NULL;
	char self[4096], dir[4200], host[4400], guest[4400];
	double med[NWL][NCFG];
	int reps = 3, c;
	ssize_t n;
	FILE *f;

	optind = 1;
	while ((c = getopt_long(argc, argv, "s:n:h", opts, NULL)) != -1) {
		switch (c) {
		case 's': size = optarg; break;
		case 'n': reps = atoi(optarg); break;
		case 'j': json = optarg; break;
		case 'c': csv = optarg; break;
		case 'm': md = optarg; break;
		case 'p': plot = optarg; break;
		case 'h':
			puts("usage: vmm bench suite [--size tiny|test|train|ref] "
			     "[--reps N] [--json F] [--csv F] [--markdown F] "
			     "[--plot F.png]");
			return 0;
		default:
			fprintf(stderr, "vmm: bench suite: bad option\n");
			return VMM_EXIT_ERROR;
		}
	}
	if (reps < 1 || reps > 100) {
		fprintf(stderr, "vmm: bench suite: --reps takes 1 to 100\n");
		return VMM_EXIT_ERROR;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return VMM_EXIT_ERROR;
	self[n] = 0;
	snprintf(dir, sizeof(dir), "%s", self);
	*strrchr(dir, '/') = 0;
	printf("%-11s %9s %9s %9s %9s %9s   (median wall s of %d, size %s)\n",
	       "workload", "native", "guest", "offset", "saverest.", "raw",
	       reps, size);
	for (size_t w = 0; w < NWL; w++) {
		double t[NCFG][100];

		snprintf(host, sizeof(host), "%s/../workloads/wl-%s.musl", dir,
			 wl_names[w]);
		snprintf(guest, sizeof(guest), "%s", host);
		for (int r = 0; r < reps; r++) {
			/* Progress on a terminal only: logs stay clean. */
			if (isatty(2))
				fprintf(stderr, "\r[%zu/%zu] %-10s run %d/%d ",
					w + 1, NWL, wl_names[w], r + 1, reps);
			for (int k = 0; k < NCFG; k++) {
				char *nat[] = { host, (char *)size, NULL };
				char *run[] = { self, "run", guest, (char *)size,
						NULL };
				char *st[] = { self, "stat", "-o", "/dev/null",
					       "-e", "cycles", "--policy",
					       (char *)cfg_names[k], guest,
					       (char *)size, NULL };

				/* The same static musl binary everywhere. */
				t[k][r] = run_timed(k == CFG_NATIVE ? nat :
						    k == CFG_GUEST ? run : st);
				if (t[k][r] < 0) {
					fprintf(stderr, "vmm: bench suite: %s "
						"failed (%s)\n", wl_names[w],
						cfg_names[k]);
					return VMM_EXIT_ERROR;
				}
			}
		}
		if (isatty(2))
			fprintf(stderr, "\r%40s\r", "");
		printf("%-11s", wl_names[w]);
		for (int k = 0; k < NCFG; k++) {
			qsort(t[k], reps, sizeof(double), cmp_d);
			med[w][k] = t[k][reps / 2];
			printf(" %9.3f", med[w][k]);
		}
		printf("   guest/native %.3f, offset/guest %.3f\n",
		       med[w][CFG_GUEST] / med[w][CFG_NATIVE],
		       med[w][CFG_OFFSET] / med[w][CFG_GUEST]);
		fflush(stdout);
	}
	if (json && (f = fopen(json, "w"))) {
		fprintf(f, "{\"size\": \"%s\", \"reps\": %d, \"workloads\": [", size,
			reps);
		for (size_t w = 0; w < NWL; w++) {
			fprintf(f, "%s{\"name\": \"%s\"", w ? ", " : "",
				wl_names[w]);
			for (int k = 0; k < NCFG; k++)
				fprintf(f, ", \"%s_s\": %.4f", cfg_names[k],
					med[w][k]);
			fprintf(f, "}");
		}
		fprintf(f, "]}\n");
		fclose(f);
	}
	if (csv && (f = fopen(csv, "w"))) {
		fprintf(f, "workload,native_s,guest_s,offset_s,saverestore_s,raw_s\n");
		for (size_t w = 0; w < NWL; w++)
			fprintf(f, "%s,%.4f,%.4f,%.4f,%.4f,%.4f\n", wl_names[w],
				med[w][0], med[w][1], med[w][2], med[w][3],
				med[w][4]);
		fclose(f);
	}
	/* A bar chart of each configuration's time relative to native. */
	if (plot) {
		char cmd[5000];

		snprintf(cmd, sizeof(cmd), "gnuplot > /dev/null 2>&1");
		f = popen(cmd, "w");
		if (f) {
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
				"'' using 5 title 'raw'\n", plot, size, reps);
			for (int k = 1; k < NCFG; k++) {
				for (size_t w = 0; w < NWL; w++) {
					fprintf(f, "%s", wl_names[w]);
					for (int j = 1; j < NCFG; j++)
						fprintf(f, " %.3f",
							med[w][j] / med[w][0]);
					fprintf(f, "\n");
				}
				fprintf(f, "e\n");
			}
			if (pclose(f))
				fprintf(stderr, "vmm: bench suite: gnuplot "
					"failed; no plot\n");
		}
	}
	if (md && (f = fopen(md, "w"))) {
		fprintf(f, "# perfvisor results\n\nGenerated by `vmm bench suite "
			"--size %s --reps %d --markdown docs/results.md`: median "
			"wall seconds of each workload (the same static musl "
			"binary) natively, in the guest, and in the guest under "
			"`vmm stat -e cycles` with each policy.  Ratios are "
			"within this one run.\n\n", size, reps);
		fprintf(f, "| workload | native s | guest s | guest/native | "
			"offset/guest | saverestore/guest | raw/guest |\n"
			"|---|---|---|---|---|---|---|\n");
		for (size_t w = 0; w < NWL; w++)
			fprintf(f, "| %s | %.3f | %.3f | %.3f | %.3f | %.3f | "
				"%.3f |\n", wl_names[w], med[w][0], med[w][1],
				med[w][1] / med[w][0], med[w][2] / med[w][1],
				med[w][3] / med[w][1], med[w][4] / med[w][1]);
		if (plot)
			fprintf(f, "\n![time relative to native](%s)\n",
				strrchr(plot, '/') ? strrchr(plot, '/') + 1 : plot);
		fclose(f);
	}
	return 0;
}
