// SPDX-License-Identifier: MIT
/*
 * vmm bench overhead [-n PAIRS] [--source tsc|step] [--json] [PROGRAM [ARGS...]]
 *
 * What counting costs a CPU-bound program: `vmm run` against `vmm stat -e
 * cycles` (tsc source, offset policy) of the same program, or with
 * `--source step` against exact counts (`-e instructions:u`, counted by
 * the code cache), in pairs whose order alternates (ABBA) so that drift
 * on a shared host cancels.  It prints the median of the per-pair
 * wall-time ratios with their spread, and the VM exits of each side:
 * counting a single-threaded program adds a constant handful of exits
 * (the configuration hypercall and the per-thread report), not exits
 * that grow with its run time, which is the structural reason its
 * overhead is near zero even when the wall clock cannot resolve 1%.
 * The default PROGRAM is lbm at `train` size.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "config.h"

#define OVERHEAD_MAX_PAIRS	64

struct overhead_run {
	double wall_s;
	double exits;		/* summed over the vCPUs (vmm -v) */
};

/* Sum of "vmm: cpu N: E exits to the VMM" lines in a -v log. */
static double overhead_exits(FILE *f)
{
	char line[512];
	unsigned long long e;
	double sum = 0;
	int cpu;

	rewind(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "vmm: cpu %d: %llu exits to the VMM", &cpu,
			   &e) == 2)
			sum += e;
	return sum;
}

/* One `vmm MODE -v ... -- PROGRAM ARGS`, timed from fork to wait. */
static int overhead_once(const char *self, const char *source, bool count,
			 char **prog, struct overhead_run *out)
{
	char *argv[64];
	struct bench_run r;
	FILE *log = tmpfile();
	int n = 0, err;

	if (!log)
		return -1;
	argv[n++] = (char *)self;
	argv[n++] = count ? "stat" : "run";
	argv[n++] = "-v";
	argv[n++] = "--timeout";
	argv[n++] = "600";
	if (count) {
		argv[n++] = "--source";
		argv[n++] = (char *)source;
		argv[n++] = "-e";
		argv[n++] = strcmp(source, "step") ? "cycles" : "instructions:u";
		argv[n++] = "-o";
		argv[n++] = "/dev/null";
	}
	argv[n++] = "--";
	for (int i = 0; prog[i] && n < 63; i++)
		argv[n++] = prog[i];
	argv[n] = NULL;
	err = bench_run(argv, false, fileno(log), &r);
	if (!err) {
		out->wall_s = r.wall_s;
		out->exits = overhead_exits(log);
	}
	fclose(log);
	return err;
}

int bench_overhead(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "source", required_argument, NULL, 's' },
		{ 0 }
	};
	double ratio[OVERHEAD_MAX_PAIRS], plain[OVERHEAD_MAX_PAIRS],
	       counted[OVERHEAD_MAX_PAIRS], xplain[OVERHEAD_MAX_PAIRS],
	       xcounted[OVERHEAD_MAX_PAIRS];
	char self[4096], lbm[4200], *deflt[] = { lbm, "train", NULL };
	char **prog = deflt;
	const char *source = "tsc";
	int pairs = 8, c;
	bool json = false;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+n:", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			pairs = atoi(optarg);
			break;
		case 'j':
			json = true;
			break;
		case 's':
			source = optarg;
			break;
		default:
			return VMM_EXIT_ERROR;
		}
	}
	if (pairs < 1 || pairs > OVERHEAD_MAX_PAIRS) {
		fprintf(stderr, "vmm: bench overhead: -n must be 1-%d\n",
			OVERHEAD_MAX_PAIRS);
		return VMM_EXIT_ERROR;
	}
	if (strcmp(source, "tsc") && strcmp(source, "step")) {
		fprintf(stderr, "vmm: bench overhead: --source must be tsc or "
			"step\n");
		return VMM_EXIT_ERROR;
	}
	if (bench_self(self, sizeof(self)))
		return VMM_EXIT_ERROR;
	/* The build tree's lbm, next to vmm's directory. */
	snprintf(lbm, sizeof(lbm), "%.*s/../workloads/wl-lbm.musl",
		 (int)(strrchr(self, '/') - self), self);
	if (optind < argc)
		prog = argv + optind;
	for (int i = 0; i < pairs; i++) {
		struct overhead_run a, b;
		/* ABBA: even pairs run plain first, odd ones counted first. */
		bool first = i % 2;

		if (overhead_once(self, source, first, prog,
				  first ? &b : &a) ||
		    overhead_once(self, source, !first, prog,
				  first ? &a : &b)) {
			fprintf(stderr, "vmm: bench overhead: %s failed\n",
				prog[0]);
			return VMM_EXIT_ERROR;
		}
		plain[i] = a.wall_s;
		counted[i] = b.wall_s;
		xplain[i] = a.exits;
		xcounted[i] = b.exits;
		ratio[i] = b.wall_s / a.wall_s;
		if (isatty(2))
			fprintf(stderr, "\rpair %d/%d", i + 1, pairs);
	}
	if (isatty(2))
		fputc('\n', stderr);
	{
		double med = bench_median(ratio, pairs), lo = ratio[0],
		       hi = ratio[pairs - 1];

		if (json) {
			printf("{\"source\": \"%s\", \"pairs\": %d, "
			       "\"ratio_median\": %.4f, "
			       "\"ratio_min\": %.4f, \"ratio_max\": %.4f, "
			       "\"plain_s\": %.3f, \"counted_s\": %.3f, "
			       "\"plain_exits\": %.0f, \"counted_exits\": %.0f}\n",
			       source, pairs, med, lo, hi,
			       bench_median(plain, pairs),
			       bench_median(counted, pairs),
			       bench_median(xplain, pairs),
			       bench_median(xcounted, pairs));
			return 0;
		}
		printf("%s: %d pairs of `vmm run` and `vmm stat %s` "
		       "(offset)\n", prog[0], pairs,
		       strcmp(source, "step") ? "-e cycles (tsc)" :
		       "-e instructions:u (step: exact)");
		printf("  wall s, median:     plain %.3f  counted %.3f\n",
		       bench_median(plain, pairs),
		       bench_median(counted, pairs));
		printf("  counted/plain:      median %.4f  (min %.4f, max "
		       "%.4f)\n", med, lo, hi);
		printf("  VM exits, median:   plain %.0f  counted %.0f\n",
		       bench_median(xplain, pairs),
		       bench_median(xcounted, pairs));
	}
	return 0;
}
