/* SPDX-License-Identifier: MIT */
#ifndef VMM_BENCH_H
#define VMM_BENCH_H

int cmd_bench(int argc, char **argv);
int bench_suite(int argc, char **argv);
int bench_overhead(int argc, char **argv);
/* The median of v[0..n-1], which it sorts. */
double bench_median(double *v, int n);

#endif
