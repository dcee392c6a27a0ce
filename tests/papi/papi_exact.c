// SPDX-License-Identifier: MIT
/*
 * Exact counts through Debian's own libpapi.a, unchanged, in the guest
 * under the step source: two threads run the same 2-instruction loop
 * (dec; jnz) 1000 and 5000 times between PAPI_start and PAPI_stop, each
 * with its own event set of PAPI_TOT_INS, PAPI_BR_INS and PAPI_TOT_CYC.
 * Whatever PAPI and the kernel add around the loop is the same in both,
 * so the counts must differ by exactly 8000 instructions and 4000
 * branches; cycles must be counted, in the same set.  The threads run at
 * once (on two vCPUs with --cpus 2).
 */
#include <papi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

struct run {
	long iterations;
	long long v[3];
	int err;
};

static void loop(long n)
{
	__asm__ volatile("1:\tdec %0\n\tjnz 1b" : "+r"(n) : : "cc");
}

static void *thread_run(void *arg)
{
	struct run *r = arg;
	int es = PAPI_NULL;

	if (PAPI_register_thread() != PAPI_OK ||
	    PAPI_create_eventset(&es) != PAPI_OK ||
	    PAPI_add_event(es, PAPI_TOT_INS) != PAPI_OK ||
	    PAPI_add_event(es, PAPI_BR_INS) != PAPI_OK ||
	    PAPI_add_event(es, PAPI_TOT_CYC) != PAPI_OK) {
		r->err = 1;
		return NULL;
	}
	if (PAPI_start(es) != PAPI_OK) {
		r->err = 2;
		return NULL;
	}
	loop(r->iterations);
	/* Kernel time, the same in both threads: from the step source's code
	 * cache the loop takes microseconds, less than one host preemption
	 * whose steal the cycles drop. */
	for (int i = 0; i < 16; i++)
		syscall(SYS_getppid);
	if (PAPI_stop(es, r->v) != PAPI_OK)
		r->err = 3;
	PAPI_unregister_thread();
	return NULL;
}

int main(void)
{
	struct run r[2] = { { .iterations = 1000 }, { .iterations = 5000 } };
	pthread_t t[2];
	long long di, db;

	if (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT ||
	    PAPI_thread_init(pthread_self) != PAPI_OK) {
		printf("papi_exact: PAPI set-up failed\n");
		return 1;
	}
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, thread_run, &r[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 2; i++) {
		printf("thread %d: %ld iterations: %lld instructions, %lld "
		       "branches, %lld cycles (error %d)\n", i, r[i].iterations,
		       r[i].v[0], r[i].v[1], r[i].v[2], r[i].err);
		if (r[i].err)
			return 1;
	}
	di = r[1].v[0] - r[0].v[0];
	db = r[1].v[1] - r[0].v[1];
	printf("papi_exact: %s (difference %lld instructions, %lld branches; "
	       "want 8000 and 4000, cycles non-zero)\n",
	       di == 8000 && db == 4000 && r[0].v[2] > 0 && r[1].v[2] > 0 ?
	       "ok" : "WRONG", di, db);
	return !(di == 8000 && db == 4000 && r[0].v[2] > 0 && r[1].v[2] > 0);
}
