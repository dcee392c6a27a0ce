/* SPDX-License-Identifier: MIT */
#ifndef VMM_BENCH_H
#define VMM_BENCH_H

int cmd_bench(int argc, char **argv);
int bench_suite(int argc, char **argv);

#endif
