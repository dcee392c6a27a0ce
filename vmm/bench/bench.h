/* SPDX-License-Identifier: MIT */
#ifndef VMM_BENCH_H
#define VMM_BENCH_H

#include <stdbool.h>
#include <stddef.h>

int cmd_bench(int argc, char **argv);
int bench_suite(int argc, char **argv);
int bench_overhead(int argc, char **argv);
int bench_record(int argc, char **argv);
/* The median of v[0..n-1], which it sorts. */
double bench_median(double *v, int n);

/* This vmm's own path (the build tree's programs are found from it). */
int bench_self(char *self, size_t len);

/* Is wl in the comma-separated list (NULL: every workload)? */
bool bench_wl_selected(const char *list, const char *wl);

/* Seconds on CLOCK_MONOTONIC. */
double bench_now_s(void);

/* What one child run gave: wall time and TSC ticks from fork to wait. */
struct bench_run {
	double wall_s;
	unsigned long long tsc;
	double cpu_s;		/* the child's user + system time */
};

/*
 * Run argv (argv[0] a path) with stdout to /dev/null and stderr to err_fd
 * (-1: /dev/null); 0 when it exited 0.  no_aslr: the oracle, whose
 * program's malloc paths depend on addresses.
 */
int bench_run(char *const argv[], bool no_aslr, int err_fd,
	      struct bench_run *out);

#endif
