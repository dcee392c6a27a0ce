// SPDX-License-Identifier: MIT
/*
 * vmm bench record [-n ROUNDS] [--size S] [--workloads W,...] [--json]
 *
 * What sampling costs a program: per workload, the wall time of `vmm
 * record -e cycles` at 1 kHz and 10 kHz of the thread's cycles, sampled by
 * the VMM (a host timer, vcpu_sample.c) and by the guest kernel (virtual
 * PMIs), each against `vmm run` of the same round.  Each round runs the
 * five in an order rotated by one, so that drift on a shared host falls
 * on each alike; the ratios are medians over the rounds.  The samples
 * each run took are printed too: a sampler that throttles (the guest
 * kernel's, when its handler outlasts a period) takes fewer than asked.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "config.h"

#define REC_MAX_ROUNDS	32
#define REC_CONFIGS	5	/* run, then vmm/guest at 1 kHz and 10 kHz */

static const char *const rec_workloads[] = {
	"mcf", "bzip2", "hmmer", "sjeng", "libquantum", "lbm", "spmv",
};

static const struct rec_config {
	const char *name;	/* as printed */
	const char *sampler;	/* NULL: `vmm run` */
	int hz;
} rec_configs[REC_CONFIGS] = {
	{ "run", NULL, 0 },
	{ "vmm-1k", "vmm", 1000 },
	{ "vmm-10k", "vmm", 10000 },
	{ "guest-1k", "guest", 1000 },
	{ "guest-10k", "guest", 10000 },
};

struct rec_bench {
	char self[4096];
	char wldir[4200];
	char data[64];		/* record's output, removed at the end */
	const char *size;
	double tsc_khz;		/* from the first run's TSC and wall time */
};

/* "[ vmm record: N samples ...": the samples a record run took. */
static double rec_samples(FILE *f)
{
	char line[512];
	unsigned long n;

	rewind(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "[ vmm record: %lu samples", &n) == 1)
			return n;
	return 0;
}

static int rec_once(struct rec_bench *b, const char *wl,
		    const struct rec_config *c, double *wall, double *samples)
{
	char prog[4300], period[32], *argv[24];
	struct bench_run r;
	FILE *log = tmpfile();
	int n = 0, err;

	if (!log)
		return -1;
	snprintf(prog, sizeof(prog), "%s/wl-%s.musl", b->wldir, wl);
	argv[n++] = b->self;
	argv[n++] = c->sampler ? "record" : "run";
	argv[n++] = "--timeout";
	argv[n++] = "600";
	if (c->sampler) {
		snprintf(period, sizeof(period), "%.0f",
			 b->tsc_khz * 1000 / c->hz);
		argv[n++] = "--sampler";
		argv[n++] = (char *)c->sampler;
		argv[n++] = "-e";
		argv[n++] = "cycles";
		argv[n++] = "-c";
		argv[n++] = period;
		argv[n++] = "-o";
		argv[n++] = b->data;
	}
	argv[n++] = "--";
	argv[n++] = prog;
	argv[n++] = (char *)b->size;
	argv[n] = NULL;
	err = bench_run(argv, false, fileno(log), &r);
	if (!err) {
		*wall = r.wall_s;
		*samples = rec_samples(log);
		if (!b->tsc_khz && r.wall_s > 0)
			b->tsc_khz = r.tsc / r.wall_s / 1000;
	}
	fclose(log);
	return err;
}

/* One workload's rounds; prints its line (human or JSON). */
static int rec_workload(struct rec_bench *b, const char *wl, int rounds,
			bool json, bool first)
{
	double wall[REC_CONFIGS][REC_MAX_ROUNDS];
	double ratio[REC_CONFIGS][REC_MAX_ROUNDS];
	double smp[REC_CONFIGS][REC_MAX_ROUNDS];

	for (int i = 0; i < rounds; i++) {
		for (int k = 0; k < REC_CONFIGS; k++) {
			int c = (i + k) % REC_CONFIGS;

			if (rec_once(b, wl, &rec_configs[c], &wall[c][i],
				     &smp[c][i])) {
				fprintf(stderr, "vmm: bench record: %s (%s) "
					"failed\n", wl, rec_configs[c].name);
				return -1;
			}
		}
		for (int c = 0; c < REC_CONFIGS; c++)
			ratio[c][i] = wall[c][i] / wall[0][i];
		if (isatty(2))
			fprintf(stderr, "\r%s: round %d/%d   ", wl, i + 1, rounds);
	}
	if (isatty(2))
		fputc('\n', stderr);
	if (json) {
		printf("%s\n  {\"workload\": \"%s\", \"size\": \"%s\", "
		       "\"rounds\": %d, \"run_s\": %.3f", first ? "" : ",", wl,
		       b->size, rounds, bench_median(wall[0], rounds));
		for (int c = 1; c < REC_CONFIGS; c++)
			printf(", \"%s_ratio\": %.4f, \"%s_samples\": %.0f",
			       rec_configs[c].name,
			       bench_median(ratio[c], rounds),
			       rec_configs[c].name,
			       bench_median(smp[c], rounds));
		printf("}");
		return 0;
	}
	printf("| %s | %.3f |", wl, bench_median(wall[0], rounds));
	for (int c = 1; c < REC_CONFIGS; c++)
		printf(" %.3f (%.0f) |", bench_median(ratio[c], rounds),
		       bench_median(smp[c], rounds));
	printf("\n");
	fflush(stdout);
	return 0;
}

int bench_record(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "size", required_argument, NULL, 's' },
		{ "workloads", required_argument, NULL, 'w' },
		{ 0 }
	};
	struct rec_bench b = { .size = "train" };
	const char *list = NULL;
	int rounds = 3, c, fd, status = 0;
	bool json = false, first = true;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+n:", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			rounds = atoi(optarg);
			break;
		case 'j':
			json = true;
			break;
		case 's':
			b.size = optarg;
			break;
		case 'w':
			list = optarg;
			break;
		default:
			return VMM_EXIT_ERROR;
		}
	}
	if (rounds < 1 || rounds > REC_MAX_ROUNDS) {
		fprintf(stderr, "vmm: bench record: -n must be 1-%d\n",
			REC_MAX_ROUNDS);
		return VMM_EXIT_ERROR;
	}
	if (bench_self(b.self, sizeof(b.self)))
		return VMM_EXIT_ERROR;
	snprintf(b.wldir, sizeof(b.wldir), "%.*s/../workloads",
		 (int)(strrchr(b.self, '/') - b.self), b.self);
	snprintf(b.data, sizeof(b.data), "/tmp/pv-bench-record-XXXXXX");
	fd = mkstemp(b.data);
	if (fd < 0)
		return VMM_EXIT_ERROR;
	close(fd);
	if (json)
		printf("[");
	else
		printf("`vmm record -e cycles` / `vmm run`, wall time, median of "
		       "%d rounds at size %s (samples taken in brackets)\n\n"
		       "| workload | run s | VMM 1 kHz | VMM 10 kHz | guest 1 kHz "
		       "| guest 10 kHz |\n|---|---|---|---|---|---|\n",
		       rounds, b.size);
	for (size_t w = 0; w < sizeof(rec_workloads) / sizeof(*rec_workloads);
	     w++) {
		if (!bench_wl_selected(list, rec_workloads[w]))
			continue;
		status = rec_workload(&b, rec_workloads[w], rounds, json, first);
		first = false;
		if (status)
			break;
	}
	if (json)
		printf("\n]\n");
	unlink(b.data);
	return status ? VMM_EXIT_ERROR : 0;
}
