// SPDX-License-Identifier: MIT
/*
 * The same program counted by `vmm stat` from outside and by Debian's
 * libpapi.a inside (tests/papi/check_stat_vs_papi.sh):
 *
 *   papi_stat N
 *
 * runs a loop of N iterations (dec; jnz: 2N instructions, N branches)
 * between PAPI_start and PAPI_stop of one event set of PAPI_TOT_INS and
 * PAPI_BR_INS, and prints the two counts.  The loop is the only thing N
 * changes, so over two N both tools must see exactly 2 and 1 more per
 * iteration, and what vmm stat counts beyond PAPI (the program outside
 * PAPI's region) is the same number at every N.
 */
#include <papi.h>
#include <stdio.h>
#include <stdlib.h>

static void loop(long n)
{
	__asm__ volatile("1:\tdec %0\n\tjnz 1b" : "+r"(n) : : "cc");
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 0;
	long long v[2];
	int es = PAPI_NULL;

	if (n < 1 || PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT ||
	    PAPI_create_eventset(&es) != PAPI_OK ||
	    PAPI_add_event(es, PAPI_TOT_INS) != PAPI_OK ||
	    PAPI_add_event(es, PAPI_BR_INS) != PAPI_OK) {
		printf("papi_stat: PAPI set-up failed\n");
		return 1;
	}
	if (PAPI_start(es) != PAPI_OK) {
		printf("papi_stat: PAPI_start failed\n");
		return 1;
	}
	loop(n);
	if (PAPI_stop(es, v) != PAPI_OK) {
		printf("papi_stat: PAPI_stop failed\n");
		return 1;
	}
	printf("papi_stat: %lld instructions %lld branches\n", v[0], v[1]);
	return 0;
}
